import type { PgClient } from '../../../shared/clients/postgres.js';
import { ConflictError, ValidationError } from '../../../shared/errors.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { currentPeriod } from '../subscriptions/periods.js';
import { getSubscription } from '../subscriptions/store.js';
import type { Item } from '../subscriptions/types.js';
import { flatPrices, schedulePlanChange } from './change-store.js';
import { checkPlanPricedIn } from './price-books.js';
import { switchPlanVersion } from './switch.js';
import { planVersionToSubscribe } from './subscribe.js';
import type { PlanVersionRow } from './types.js';

/**
 * A subscription moves to another plan (docs/plans.md "Changing a subscription's plan"; the customer portal's
 * "change plan"): now — its items replaced at that instant and pro-rated exactly as any items change
 * (switchPlanVersion) — or at the end of its current period, applied by the billing run like a migration's move.
 * Without a given timing the rule is: an upgrade now, anything else at the period's end.
 */
export type PlanChangeTiming = 'now' | 'period_end';

/** What a version bills every period whatever the usage: its flat items, price × quantity, exact. */
async function recurringAmount(client: PgClient, items: readonly Item[]): Promise<Decimal> {
  const prices = await flatPrices(
    client,
    items.map((i) => i.product_id),
  );
  return items.reduce((sum, i) => {
    const price = prices.get(i.product_id);
    return price === undefined ? sum : sum.plus(new Decimal(price).times(i.quantity ?? 1));
  }, new Decimal(0));
}

/** THE upgrade rule: the new version bills more every period than the subscription's items do now. */
export async function isUpgrade(client: PgClient, from: readonly Item[], to: PlanVersionRow): Promise<boolean> {
  return (await recurringAmount(client, to.items)).gt(await recurringAmount(client, from));
}

/**
 * Moves the subscription (locked by the caller's transaction, in `accountId`) to `to` at `timing` (default: the
 * upgrade rule) at the account's time `now`. The plan must have a price in the subscription's currency (price books)
 * and bill its periods (else 422 on plan_id); a canceled subscription → 409. Returns the timing used.
 */
export async function changeSubscriptionPlan(
  client: PgClient,
  accountId: string,
  subscriptionId: string,
  to: { planId: string; version?: number },
  timing: PlanChangeTiming | undefined,
  now: Date,
): Promise<PlanChangeTiming> {
  const cur = await getSubscription(client, accountId, subscriptionId, true);
  if (cur.row.status === 'canceled')
    throw new ConflictError(
      `Subscription ${subscriptionId} is canceled and can no longer change.`,
      'subscription_canceled',
    );
  const version = await planVersionToSubscribe(client, to.planId, to.version);
  if (version.interval !== cur.row.interval || version.interval_count !== cur.row.interval_count)
    throw new ValidationError([
      {
        field: 'plan_id',
        message: `bills every ${version.interval_count} ${version.interval}: the subscription’s periods must stay (${cur.row.interval_count} ${cur.row.interval})`,
      },
    ]);
  // Price books: the subscription keeps its currency; the plan must have a price in it (422 currency_not_priced).
  await checkPlanPricedIn(client, version, cur.row.currency);
  if (version.plan_id === cur.row.plan_id && version.version === cur.row.plan_version)
    throw new ValidationError([{ field: 'plan_id', message: 'is the subscription’s plan already' }]);
  const when = timing ?? ((await isUpgrade(client, cur.items, version)) ? 'now' : 'period_end');
  // A scheduled change is a version of a plan the subscription is on (the subscriptions_pending_plan constraint):
  // one subscribed to items, not to a plan, changes plan now.
  if (when === 'period_end' && cur.row.plan_id === null)
    throw new ValidationError([{ field: 'at', message: 'must be now: the subscription is not on a plan yet' }]);
  if (when === 'now') await switchPlanVersion(client, accountId, subscriptionId, version, now);
  else
    await schedulePlanChange(client, subscriptionId, version.plan_id, version.version, currentPeriod(cur.row, now).end);
  return when;
}
