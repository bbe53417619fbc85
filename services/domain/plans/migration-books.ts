import { withTransaction, type PgPool } from '../../../shared/clients/postgres.js';
import { checkPlanPricedIn } from './price-books.js';
import { getPlanVersion, subscriberCurrencies } from './store.js';

/**
 * Moving a version's subscribers (docs/plans.md "Moving subscribers") keeps each subscription's currency, so the
 * version moved to must have a price in every currency they bill in (price books): else 422 currency_not_priced on
 * `to_version` naming the currency and the items, before anything moves — not a refusal halfway through the batches.
 */
export async function checkMigrationPriced(pool: PgPool, planId: string, from: number, to: number): Promise<void> {
  const currencies = await subscriberCurrencies(pool, planId, from);
  if (!currencies.length) return;
  const version = await getPlanVersion(pool, planId, to);
  await withTransaction(pool, async (c) => {
    for (const currency of currencies) await checkPlanPricedIn(c, version, currency, 'to_version');
  });
}
