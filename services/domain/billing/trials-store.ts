import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { inScope, type BillingScope } from './scope.js';

/** A running subscription whose trial-end notice is not sent yet (trials.ts). */
const NOTICE = `s.trial_end IS NOT NULL AND s.trial_will_end_at IS NULL AND s.status = 'active'`;

/**
 * Marks up to `batch` subscriptions of the scope whose notice falls due by `now` (`days` before the trial ends) as
 * noticed, and returns them; rows another run holds are skipped.
 */
export async function markTrialNotices(
  client: PgClient,
  now: Date,
  days: number,
  scope: BillingScope,
  batch: number,
): Promise<{ id: string; account_id: string; trial_end: Date }[]> {
  const r = await client.query<{ id: string; account_id: string; trial_end: Date }>(
    `UPDATE subscriptions u SET trial_will_end_at = $1
       FROM (SELECT s.id FROM subscriptions s
              WHERE ${NOTICE} AND s.trial_end - make_interval(days => $2) <= $1 AND ${inScope('s.account_id', '$3')}
              ORDER BY s.trial_end LIMIT $4 FOR UPDATE SKIP LOCKED) d
      WHERE u.id = d.id RETURNING u.id, u.account_id, u.trial_end`,
    [now, days, scope.clockId, batch],
  );
  return r.rows;
}

/** When the scope's first unsent notice falls due (`days` before its trial ends), or null. */
export async function firstTrialNoticeAt(pg: PgPool, days: number, scope: BillingScope): Promise<Date | null> {
  const r = await pg.query<{ at: Date | null }>(
    `SELECT min(s.trial_end - make_interval(days => $2)) AS at FROM subscriptions s WHERE ${NOTICE} AND ${inScope('s.account_id', '$1')}`,
    [scope.clockId, days],
  );
  return r.rows[0]?.at ?? null;
}
