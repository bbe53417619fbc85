import { withTransaction } from '../../../shared/clients/postgres.js';
import { appendEvents } from '../events/outbox-store.js';
import type { BillingDeps } from './deps.js';
import { inScope, LIVE_CUSTOMERS, type BillingScope } from './scope.js';

/**
 * Trials (docs/billing.md "Trials"): `subscription.trial_will_end` {subscription_id, trial_end} three days before a
 * running subscription's trial ends (at its first billing run when the trial is shorter), exactly once: the mark
 * (trial_will_end_at) and the event commit in one transaction, and a marked subscription is never picked again.
 */
export const TRIAL_NOTICE_DAYS = 3;
const NOTICE = `s.trial_end IS NOT NULL AND s.trial_will_end_at IS NULL AND s.status = 'active'`;
const BATCH = 1000;

export async function emitTrialWillEnd(
  deps: Pick<BillingDeps, 'pg'>,
  now: Date,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<string[]> {
  const all: string[] = [];
  for (;;) {
    const ids = await withTransaction(deps.pg, async (client) => {
      const r = await client.query<{ id: string; account_id: string; trial_end: Date }>(
        `UPDATE subscriptions u SET trial_will_end_at = $1
           FROM (SELECT s.id FROM subscriptions s
                  WHERE ${NOTICE} AND s.trial_end - make_interval(days => $2) <= $1 AND ${inScope('s.account_id', '$3')}
                  ORDER BY s.trial_end LIMIT $4 FOR UPDATE SKIP LOCKED) d
          WHERE u.id = d.id RETURNING u.id, u.account_id, u.trial_end`,
        [now, TRIAL_NOTICE_DAYS, scope.clockId, BATCH],
      );
      await appendEvents(
        client,
        r.rows.map((s) => ({
          accountId: s.account_id,
          type: 'subscription.trial_will_end',
          data: { subscription_id: s.id, trial_end: s.trial_end.toISOString() },
        })),
      );
      return r.rows.map((s) => s.id);
    });
    all.push(...ids);
    if (ids.length < BATCH) return all;
  }
}

/** When the next trial notice falls due in the scope (a test clock's advance stops there), or null. */
export async function nextTrialNoticeDue(
  deps: Pick<BillingDeps, 'pg'>,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<Date | null> {
  const r = await deps.pg.query<{ at: Date | null }>(
    `SELECT min(s.trial_end - make_interval(days => $2)) AS at FROM subscriptions s WHERE ${NOTICE} AND ${inScope('s.account_id', '$1')}`,
    [scope.clockId, TRIAL_NOTICE_DAYS],
  );
  return r.rows[0]?.at ?? null;
}
