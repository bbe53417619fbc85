import type { PgClient } from '../../../shared/clients/postgres.js';
import { appendEvent } from '../events/outbox-store.js';
import { changeSubscription } from '../subscriptions/store.js';
import { subscriptionEventData } from '../subscriptions/types.js';
import { itemsOfPlan } from './subscribe.js';
import type { PlanVersionRow } from './types.js';

/**
 * Gives a subscription a plan version's items at `at` — pro-rated exactly as any items change (PATCH
 * /v1/subscriptions, changeSubscription) — and names that version; one `subscription.updated`, in the caller's
 * transaction (changeSubscription emits it when the items differ; the same items on a new version: here).
 */
export async function switchPlanVersion(
  client: PgClient,
  accountId: string,
  id: string,
  to: PlanVersionRow,
  at: Date,
): Promise<void> {
  const { subscription, changed } = await changeSubscription(
    client,
    accountId,
    id,
    { items: itemsOfPlan(to.items) },
    at,
  );
  await client.query(
    `UPDATE subscriptions SET plan_id = $2, plan_version = $3, pending_plan_version = NULL, pending_plan_at = NULL
      WHERE id = $1`,
    [id, to.plan_id, to.version],
  );
  if (!changed)
    await appendEvent(client, {
      accountId,
      type: 'subscription.updated',
      data: subscriptionEventData(subscription),
    });
}
