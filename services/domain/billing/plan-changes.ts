import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import type { BillingScope } from './scope.js';
import { lockDuePlanChanges } from './plan-changes-store.js';
import { getSubscription } from '../subscriptions/store.js';
import { switchPlanVersion } from '../plans/switch.js';
import { getPlanVersion } from '../plans/store.js';

/** Scheduled plan changes applied per transaction. */
const BATCH = 100;

/**
 * Plan migrations `at: period_end` (docs/plans.md): every subscription whose scheduled change is due by `now` moves
 * to its pending version at the scheduled instant (its period's end) — so the period that ended keeps the old
 * items whole and the next one has the new items whole. Each move holds the row lock and re-reads it (a change of
 * items or a cancellation since cleared the schedule), with its `subscription.updated`: safe to crash and repeat.
 * Called at the start of every billing run (services/domain/billing/run.ts), for the run's customers.
 */
export async function applyDuePlanChanges(pg: PgPool, now: Date, scope: BillingScope): Promise<number> {
  let applied = 0;
  for (;;) {
    const n = await withTransaction(pg, async (c) => {
      const rows = await lockDuePlanChanges(c, now, scope, BATCH);
      for (const s of rows) {
        const cur = await getSubscription(c, s.account_id, s.id, true);
        // The scheduled version is of another plan (a downgrade: plans/change.ts) or of its own (a migration).
        const planId = cur.row.pending_plan_id ?? cur.row.plan_id;
        if (cur.row.pending_plan_version === null || planId === null) continue;
        const to = await getPlanVersion(c, planId, cur.row.pending_plan_version);
        await switchPlanVersion(c, s.account_id, s.id, to, cur.row.pending_plan_at!);
      }
      return rows.length;
    });
    applied += n;
    if (n === 0) return applied;
  }
}
