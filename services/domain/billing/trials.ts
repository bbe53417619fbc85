import { withTransaction } from '../../../shared/clients/postgres.js';
import { appendEvents } from '../events/outbox-store.js';
import type { BillingDeps } from './deps.js';
import { LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import { firstTrialNoticeAt, markTrialNotices } from './trials-store.js';

/**
 * Trials (docs/billing.md "Trials"): `subscription.trial_will_end` {subscription_id, trial_end} three days before a
 * running subscription's trial ends (at its first billing run when the trial is shorter), exactly once: the mark
 * (trial_will_end_at) and the event commit in one transaction, and a marked subscription is never picked again.
 */
export const TRIAL_NOTICE_DAYS = 3;
const BATCH = 1000;

export async function emitTrialWillEnd(
  deps: Pick<BillingDeps, 'pg'>,
  now: Date,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<string[]> {
  const all: string[] = [];
  for (;;) {
    const ids = await withTransaction(deps.pg, async (client) => {
      const rows = await markTrialNotices(client, now, TRIAL_NOTICE_DAYS, scope, BATCH);
      await appendEvents(
        client,
        rows.map((s) => ({
          accountId: s.account_id,
          type: 'subscription.trial_will_end',
          data: { subscription_id: s.id, trial_end: s.trial_end.toISOString() },
        })),
      );
      return rows.map((s) => s.id);
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
  return firstTrialNoticeAt(deps.pg, TRIAL_NOTICE_DAYS, scope);
}
