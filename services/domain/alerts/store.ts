import type { PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { AlertMetric } from '../../../shared/vocabulary.js';
import { appendEvents } from '../events/outbox-store.js';
import type { AlertRow, AlertViewer } from './types.js';

/** Alerts' SQL (docs/alerts.md): the alerts, and the triggers that make each firing happen once. */
const notFound = (id: string) => new NotFoundError(`No alert ${id}.`);

const COLUMNS = `al.id, al.account_id, a.customer_id, al.metric, al.meter_id, al.currency,
  al.thresholds::text[] AS thresholds, al.created_at`;
const FROM = 'alerts al LEFT JOIN accounts a ON a.id = al.account_id';

/** The alert rows a viewer may see: a customer its own; the operator every one, or one customer's. */
function visible(viewer: AlertViewer, first: number): { where: string; params: unknown[] } {
  if (viewer.kind === 'operator' && viewer.accountId === undefined) return { where: 'TRUE', params: [] };
  return { where: `al.account_id = $${first}`, params: [viewer.accountId] };
}

/**
 * Inserts an alert unless its customer (null: the deployment-wide alerts) has `max` already (issue 49: every alert
 * is evaluated every pass) → 409 alert_limit_reached. The count and the insert hold the customer's alert lock, so
 * concurrent creations cannot overshoot.
 */
export async function insertAlert(
  pool: PgPool,
  a: {
    accountId: string | null;
    metric: AlertMetric;
    meterId: string | null;
    currency: string | null;
    thresholds: string[];
  },
  max: number,
): Promise<AlertRow> {
  const id = newId('alrt');
  await withTransaction(pool, async (c) => {
    await c.query("SELECT pg_advisory_xact_lock(hashtext('alerts:' || coalesce($1, '')))", [a.accountId]);
    const { rows } = await c.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM alerts WHERE account_id IS NOT DISTINCT FROM $1',
      [a.accountId],
    );
    if (rows[0]!.n >= max)
      throw new ConflictError(
        `The customer has ${rows[0]!.n} alerts, the most allowed (ALERTS_MAX_PER_ACCOUNT ${max}): delete one first.`,
        'alert_limit_reached',
      );
    await c.query(
      'INSERT INTO alerts (id, account_id, metric, meter_id, currency, thresholds) VALUES ($1, $2, $3, $4, $5, $6::numeric[])',
      [id, a.accountId, a.metric, a.meterId, a.currency, a.thresholds],
    );
  });
  return getAlert(pool, { kind: 'operator' }, id);
}

export async function listAlerts(
  pool: PgPool,
  viewer: AlertViewer,
  window: RowWindow,
): Promise<{ rows: AlertRow[]; total: number }> {
  const { where, params } = visible(viewer, 1);
  return selectPage<AlertRow>(
    pool,
    { columns: COLUMNS, from: FROM, where, params, orderBy: 'al.created_at DESC, al.id DESC' },
    window,
  );
}

export async function getAlert(pool: PgPool, viewer: AlertViewer, id: string): Promise<AlertRow> {
  if (!hasPrefix(id, 'alrt')) throw notFound(id);
  const { where, params } = visible(viewer, 2);
  const r = await pool.query<AlertRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE al.id = $1 AND ${where}`, [id, ...params]);
  if (!r.rows[0]) throw notFound(id);
  return r.rows[0];
}

/** Deletes the alert and its triggers: it fires no more. */
export async function deleteAlert(pool: PgPool, viewer: AlertViewer, id: string): Promise<void> {
  if (!hasPrefix(id, 'alrt')) throw notFound(id);
  const { where, params } = visible(viewer, 2);
  const r = await pool.query(`DELETE FROM alerts al WHERE al.id = $1 AND ${where}`, [id, ...params]);
  if (r.rowCount === 0) throw notFound(id);
}

/** Every alert, for the evaluator (a small table: one row per alert, not per customer). */
export async function allAlerts(pool: PgPool): Promise<AlertRow[]> {
  return (await pool.query<AlertRow>(`SELECT ${COLUMNS} FROM ${FROM} ORDER BY al.id`)).rows;
}

/** Which of these crossings are already recorded (fired by any evaluator, now or earlier): their firedKeys. */
export async function recordedAmong(pool: PgPool, crossings: Crossing[]): Promise<Set<string>> {
  if (crossings.length === 0) return new Set();
  const r = await pool.query<{ alert_id: string; account_id: string; period_start: Date; threshold: string }>(
    `SELECT t.alert_id, t.account_id, t.period_start, t.threshold::text AS threshold
       FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::numeric[]) AS k(alert_id, account_id, period_start, threshold)
       JOIN alert_triggers t ON t.alert_id = k.alert_id AND t.account_id = k.account_id
        AND t.period_start = k.period_start AND t.threshold = k.threshold`,
    [
      crossings.map((x) => x.alertId),
      crossings.map((x) => x.accountId),
      crossings.map((x) => new Date(x.periodStartMs)),
      crossings.map((x) => x.threshold),
    ],
  );
  return new Set(r.rows.map((t) => firedKey(t.alert_id, t.account_id, t.period_start.getTime(), t.threshold)));
}

export const firedKey = (alertId: string, accountId: string, periodStartMs: number, threshold: string) =>
  `${alertId}\u0000${accountId}\u0000${periodStartMs}\u0000${threshold}`;

/** A threshold an alert's customer reached in a period, with the value that reached it. */
export interface Crossing {
  alertId: string;
  accountId: string;
  metric: AlertMetric;
  meterId: string | null;
  currency: string | null;
  threshold: string;
  value: string;
  periodStartMs: number;
}

/**
 * Records crossings and their alert.triggered events in ONE transaction: the trigger row is unique per (alert,
 * customer, period, threshold), so only a crossing whose row this transaction inserted gets an event — another
 * evaluator racing on the same one waits for this commit and inserts nothing. Returns the crossings fired now.
 */
export async function fireCrossings(pool: PgPool, crossings: Crossing[]): Promise<Crossing[]> {
  if (crossings.length === 0) return [];
  return withTransaction(pool, async (c) => {
    const r = await c.query<{ alert_id: string; account_id: string; threshold: string; period_start: Date }>(
      `INSERT INTO alert_triggers (alert_id, account_id, threshold, period_start, value)
       SELECT t.alert_id, t.account_id, t.threshold, t.period_start, t.value
         FROM unnest($1::text[], $2::text[], $3::numeric[], $4::timestamptz[], $5::numeric[])
              AS t(alert_id, account_id, threshold, period_start, value)
         JOIN alerts al ON al.id = t.alert_id
       ON CONFLICT DO NOTHING
       RETURNING alert_id, account_id, threshold::text AS threshold, period_start`,
      [
        crossings.map((x) => x.alertId),
        crossings.map((x) => x.accountId),
        crossings.map((x) => x.threshold),
        crossings.map((x) => new Date(x.periodStartMs)),
        crossings.map((x) => x.value),
      ],
    );
    const inserted = new Set(
      r.rows.map((t) => firedKey(t.alert_id, t.account_id, t.period_start.getTime(), t.threshold)),
    );
    const fired = crossings.filter((x) => inserted.has(firedKey(x.alertId, x.accountId, x.periodStartMs, x.threshold)));
    await appendEvents(
      c,
      fired.map((x) => ({
        accountId: x.accountId,
        type: 'alert.triggered' as const,
        data: {
          alert_id: x.alertId,
          metric: x.metric,
          meter_id: x.meterId,
          currency: x.currency,
          threshold: new JsonDecimal(x.threshold),
          value: new JsonDecimal(x.value),
          period_start: new Date(x.periodStartMs).toISOString(),
        },
      })),
    );
    return fired;
  });
}

/** What the evaluator needs of the watched meters. */
export interface WatchedMeter {
  id: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregation: string;
  unique_by: string | null;
}

export async function watchedMeters(pool: PgPool, ids: string[]): Promise<Map<string, WatchedMeter>> {
  const r = await pool.query<WatchedMeter>(
    'SELECT id, type, aggregation, unique_by FROM meters WHERE id = ANY($1::text[])',
    [ids],
  );
  return new Map(r.rows.map((m) => [m.id, m]));
}

/** The active subscriptions of these accounts: what spend alerts price. */
export async function activeSubscriptions(
  pool: PgPool,
  accountIds: string[],
): Promise<{ id: string; account_id: string; currency: string }[]> {
  const r = await pool.query<{ id: string; account_id: string; currency: string }>(
    `SELECT id, account_id, currency FROM subscriptions WHERE status = 'active' AND account_id = ANY($1::text[]) ORDER BY id`,
    [accountIds],
  );
  return r.rows;
}
