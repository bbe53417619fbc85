import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { inScope, type BillingScope } from './scope.js';
import { emitSubscriptionUpdated, getSubscription } from '../subscriptions/store.js';
import type { SubscriptionRow } from '../subscriptions/types.js';

/** Scheduled cancellations applied per transaction. */
const BATCH = 100;

/**
 * Cancel at the period's end (docs/billing.md "Cancel at the period's end"): every active subscription whose
 * `cancel_at` has come by `now` is canceled at that instant (canceled_at = cancel_at, its period's end), with
 * `subscription.updated` and `subscription.canceled` in the same transaction. Called at the start of every billing
 * run, before the periods close: the close then issues the last period's invoice whole (a canceled subscription's
 * periods before canceled_at still close) and none after it, and the advance invoices skip the period that would
 * follow. The row lock and `status = 'active'` make it happen once, whether the run crashes or runs twice at once.
 */
export async function applyDueCancellations(pg: PgPool, now: Date, scope: BillingScope): Promise<number> {
  let applied = 0;
  for (;;) {
    const n = await withTransaction(pg, async (c) => {
      const { rows } = await c.query<Pick<SubscriptionRow, 'id' | 'account_id'>>(
        `SELECT s.id, s.account_id FROM subscriptions s
          WHERE s.status = 'active' AND s.cancel_at IS NOT NULL AND s.cancel_at <= $1 AND ${inScope('s.account_id', '$2')}
          ORDER BY s.cancel_at, s.id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
        [now, scope.clockId],
      );
      for (const s of rows) {
        const before = await getSubscription(c, s.account_id, s.id);
        const r = await c.query<SubscriptionRow>(
          `UPDATE subscriptions SET status = 'canceled', canceled_at = cancel_at, cancel_at = NULL, updated_at = cancel_at,
                  pending_plan_version = NULL, pending_plan_at = NULL,
                  -- Its trial outlasted the period it was to end with: nothing is ever billed (docs/billing.md "Trials").
                  billing_period_start = CASE WHEN trial_end >= cancel_at THEN NULL ELSE billing_period_start END,
                  billing_period_end = CASE WHEN trial_end >= cancel_at THEN NULL ELSE billing_period_end END,
                  advance_period_start = CASE WHEN trial_end >= cancel_at THEN NULL ELSE advance_period_start END,
                  advance_period_end = CASE WHEN trial_end >= cancel_at THEN NULL ELSE advance_period_end END
            WHERE id = $1 RETURNING *`,
          [s.id],
        );
        await emitSubscriptionUpdated(c, { row: r.rows[0]!, items: before.items }, before, true);
      }
      return rows.length;
    });
    applied += n;
    if (n === 0) return applied;
  }
}
