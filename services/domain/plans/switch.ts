import type { PgClient } from '../../../shared/clients/postgres.js';
import { changeSubscription, clearPendingPlanChange } from '../subscriptions/store.js';
import { hasOwnAmounts } from './price-books.js';
import { subscriptionCurrency } from './store.js';
import { itemsOfPlan } from './subscribe.js';
import type { PlanVersionRow } from './types.js';

/**
 * Gives a subscription a plan version's items — their amounts in the subscription's currency (price books) — at `at` — pro-rated exactly as any items change (PATCH
 * /v1/subscriptions, changeSubscription) — and names that version; one `subscription.updated` (its plan_version the
 * new one, previous_attributes the one it left), in the caller's transaction.
 */
export async function switchPlanVersion(
  client: PgClient,
  accountId: string,
  id: string,
  to: PlanVersionRow,
  at: Date,
): Promise<void> {
  // Only items with amounts of their own (a minimum, per-dimension prices) differ by book: the others skip the read.
  const currency = hasOwnAmounts(to) ? await subscriptionCurrency(client, accountId, id) : to.currency;
  await changeSubscription(
    client,
    accountId,
    id,
    { items: itemsOfPlan(to, currency), plan: { id: to.plan_id, version: to.version } },
    at,
  );
  await clearPendingPlanChange(client, id);
}
