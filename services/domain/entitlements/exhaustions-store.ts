import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';

/**
 * Exhaustions' SQL (the evaluator is exhaustion.ts): one row per entitlement and period whose `entitlement.exhausted`
 * event was appended, written in the event's transaction.
 */

/** The periods already recorded as exhausted for the given entitlements. */
export async function recordedExhaustions(
  pg: PgPool,
  entitlementIds: string[],
): Promise<{ entitlement_id: string; period_start: Date }[]> {
  const { rows } = await pg.query<{ entitlement_id: string; period_start: Date }>(
    'SELECT entitlement_id, period_start FROM entitlement_exhaustions WHERE entitlement_id = ANY($1::text[])',
    [entitlementIds],
  );
  return rows;
}

/**
 * Records the entitlement's period as exhausted, in the caller's transaction; false when another evaluator already
 * did (the row exists) or the entitlement is gone.
 */
export async function insertExhaustion(c: PgClient, entitlementId: string, periodStart: Date): Promise<boolean> {
  const { rowCount } = await c.query(
    `INSERT INTO entitlement_exhaustions (entitlement_id, period_start) SELECT $1, $2
      WHERE EXISTS (SELECT 1 FROM entitlements WHERE id = $1) ON CONFLICT DO NOTHING`,
    [entitlementId, periodStart],
  );
  return Boolean(rowCount);
}

/** Names the event appended for the recorded exhaustion. */
export async function setExhaustionEvent(
  c: PgClient,
  entitlementId: string,
  periodStart: Date,
  eventId: string,
): Promise<void> {
  await c.query('UPDATE entitlement_exhaustions SET event_id = $3 WHERE entitlement_id = $1 AND period_start = $2', [
    entitlementId,
    periodStart,
    eventId,
  ]);
}
