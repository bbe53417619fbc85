import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { dimensionKeyProblem } from '../../../shared/usage/dimensions.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { accountTime } from '../test-clocks/store.js';
import type { EntitlementChange, EntitlementRow, GrantRow, NewEntitlement, NewGrant } from './types.js';

/**
 * Entitlements' SQL (docs/entitlements.md). Every read and write names the account it acts for — a customer's
 * token its own, an operator's (admin) `'deployment'`: every customer's — and another customer's entitlement is
 * "does not exist" (404).
 */
export type EntitlementScope = { accountId: string } | 'deployment';

const COLUMNS = `e.id, e.account_id, a.customer_id, e.feature, e.type, e.meter_id, e."limit"::text AS "limit", e.period,
  e.overage, e.dimension_key, e.dimension_value, e.created_at, e.updated_at`;
const FROM = 'entitlements e JOIN accounts a ON a.id = e.account_id';
const GRANT_COLUMNS = 'id, entitlement_id, amount::text AS amount, granted_at, expires_at, created_at';
const notFound = (id: string) => new NotFoundError(`No entitlement ${id}.`);

function scopeSql(scope: EntitlementScope, param: number): { sql: string; params: unknown[] } {
  return scope === 'deployment'
    ? { sql: 'true', params: [] }
    : { sql: `e.account_id = $${param}`, params: [scope.accountId] };
}

/** One per (customer, feature): a second → 409 `conflict` naming `feature`. */
function featureTaken(err: unknown, feature: string): never {
  if ((err as { code?: string; constraint?: string }).constraint === 'entitlements_one_per_feature') {
    throw new ConflictError(`The customer already has an entitlement to ${JSON.stringify(feature)}.`, 'conflict', [
      { field: 'feature', message: 'the customer already has an entitlement to this feature' },
    ]);
  }
  throw err;
}

/** A metered entitlement's meter: the customer's own or a deployment meter; anything else → 422 on `meter_id`. */
async function assertMeterOf(
  db: PgPool | PgClient,
  accountId: string,
  meterId: string,
  dimension?: { key: string },
): Promise<void> {
  const { rows } = await db.query<{ dimensions: string[] }>(
    `SELECT dimensions FROM meters WHERE id = $1 AND (account_id = $2 OR scope = 'deployment')`,
    [meterId, accountId],
  );
  if (!rows[0])
    throw new ValidationError([{ field: 'meter_id', message: 'no such meter of the customer or of the deployment' }]);
  const problem = dimension && dimensionKeyProblem(dimension.key, rows[0].dimensions ?? []);
  if (problem) throw new ValidationError([{ field: 'dimension.key', message: problem }]);
}

export async function insertEntitlement(pool: PgPool, e: NewEntitlement): Promise<EntitlementRow> {
  if (e.type === 'metered') await assertMeterOf(pool, e.accountId, e.meterId, e.dimension);
  const id = newId('ent');
  try {
    await pool.query(
      `INSERT INTO entitlements (id, account_id, feature, type, meter_id, "limit", period, overage, dimension_key, dimension_value)
       VALUES ($1, $2, $3, $4, $5, $6::numeric, $7, $8, $9, $10)`,
      e.type === 'metered'
        ? [
            id,
            e.accountId,
            e.feature,
            e.type,
            e.meterId,
            e.limit,
            e.period,
            e.overage,
            e.dimension?.key ?? null,
            e.dimension?.value ?? null,
          ]
        : [id, e.accountId, e.feature, e.type, null, null, null, null, null, null],
    );
  } catch (err) {
    featureTaken(err, e.feature);
  }
  return getEntitlement(pool, 'deployment', id);
}

export async function getEntitlement(
  db: PgPool | PgClient,
  scope: EntitlementScope,
  id: string,
): Promise<EntitlementRow> {
  if (!hasPrefix(id, 'ent')) throw notFound(id);
  const s = scopeSql(scope, 2);
  const { rows } = await db.query<EntitlementRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE e.id = $1 AND ${s.sql}`, [
    id,
    ...s.params,
  ]);
  if (!rows[0]) throw notFound(id);
  return rows[0];
}

/** Newest first; `accountId` narrows an operator's list to one customer. */
export async function listEntitlements(
  pool: PgPool,
  scope: EntitlementScope,
  filter: { accountId?: string; feature?: string },
  window: RowWindow,
): Promise<{ rows: EntitlementRow[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (scope !== 'deployment') where.push(`e.account_id = $${params.push(scope.accountId)}`);
  if (filter.accountId !== undefined) where.push(`e.account_id = $${params.push(filter.accountId)}`);
  if (filter.feature !== undefined) where.push(`e.feature = $${params.push(filter.feature)}`);
  return selectPage<EntitlementRow>(
    pool,
    {
      columns: COLUMNS,
      from: FROM,
      where: where.length ? where.join(' AND ') : 'true',
      params,
      orderBy: 'e.created_at DESC, e.id DESC',
    },
    window,
  );
}

/** A PATCH of a metered entitlement's limit, period or overage (a boolean one has none: 422). */
export async function updateEntitlement(pool: PgPool, id: string, change: EntitlementChange): Promise<EntitlementRow> {
  return withTransaction(pool, async (c) => {
    const row = await getEntitlement(c, 'deployment', id);
    const changed = Object.entries(change).filter(([, v]) => v !== undefined);
    if (row.type === 'boolean' && changed.length)
      throw new ValidationError(
        changed.map(([field]) => ({ field, message: 'a boolean entitlement has no limit, period or overage' })),
      );
    await c.query(
      `UPDATE entitlements SET "limit" = COALESCE($2::numeric, "limit"), period = COALESCE($3, period),
          overage = COALESCE($4, overage), updated_at = now() WHERE id = $1`,
      [id, change.limit ?? null, change.period ?? null, change.overage ?? null],
    );
    return getEntitlement(c, 'deployment', id);
  });
}

export async function deleteEntitlement(pool: PgPool, id: string): Promise<void> {
  if (!hasPrefix(id, 'ent')) throw notFound(id);
  const { rowCount } = await pool.query('DELETE FROM entitlements WHERE id = $1', [id]);
  if (!rowCount) throw notFound(id);
}

/** A top-up of a metered entitlement, counted in the period containing the customer's time now. */
export async function insertGrant(pool: PgPool, entitlementId: string, g: NewGrant): Promise<GrantRow> {
  return withTransaction(pool, async (c) => {
    const ent = await getEntitlement(c, 'deployment', entitlementId);
    if (ent.type !== 'metered')
      throw new ConflictError(
        `Entitlement ${entitlementId} is boolean: it has no limit to add to.`,
        'entitlement_not_metered',
      );
    const { now } = await accountTime(c, ent.account_id);
    if (g.expiresAt && g.expiresAt.getTime() <= now.getTime())
      throw new ValidationError([{ field: 'expires_at', message: 'must be after the customer’s current time' }]);
    const { rows } = await c.query<GrantRow>(
      `INSERT INTO entitlement_grants (id, entitlement_id, amount, granted_at, expires_at)
       VALUES ($1, $2, $3::numeric, $4, $5) RETURNING ${GRANT_COLUMNS}`,
      [newId('entg'), entitlementId, g.amount, now, g.expiresAt],
    );
    return rows[0]!;
  });
}

/** Everything the in-memory table and the exhaustion evaluator need, in one snapshot. */
export interface LoadedEntitlement extends EntitlementRow {
  external_id: string | null;
  /** The customer's test clock time; null: real time. */
  clock_time: Date | null;
  meter_type: string | null;
  aggregation: string | null;
  unique_by: string | null;
}

export interface EntitlementSnapshot {
  version: string;
  entitlements: LoadedEntitlement[];
  /** Grants that may still count: made at most 32 days before their customer's time, not expired then. */
  grants: GrantRow[];
}

/**
 * Every entitlement of the deployment with what answering a check needs, read in one REPEATABLE READ snapshot
 * with the version it is current for; `onlyBlocking`: only metered `block` ones (the exhaustion evaluator).
 */
export async function loadEntitlements(pool: PgPool, onlyBlocking = false): Promise<EntitlementSnapshot> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const version = await client.query<{ version: string }>('SELECT version::text FROM entitlement_table_version');
    const ents = await client.query<LoadedEntitlement>(
      `SELECT ${COLUMNS}, a.external_id, c.frozen_time AS clock_time, m.type AS meter_type, m.aggregation, m.unique_by
         FROM ${FROM} LEFT JOIN test_clocks c ON c.id = a.test_clock_id LEFT JOIN meters m ON m.id = e.meter_id
        ${onlyBlocking ? `WHERE e.type = 'metered' AND e.overage = 'block'` : ''}`,
    );
    const grants = await client.query<GrantRow>(
      `SELECT g.id, g.entitlement_id, g.amount::text AS amount, g.granted_at, g.expires_at, g.created_at
         FROM entitlement_grants g JOIN entitlements e ON e.id = g.entitlement_id JOIN accounts a ON a.id = e.account_id
         LEFT JOIN test_clocks c ON c.id = a.test_clock_id
        WHERE g.granted_at >= COALESCE(c.frozen_time, now()) - interval '32 days'
          AND (g.expires_at IS NULL OR g.expires_at > COALESCE(c.frozen_time, now()) - interval '1 day')`,
    );
    await client.query('COMMIT');
    return { version: version.rows[0]!.version, entitlements: ents.rows, grants: grants.rows };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The version of the entitlement table (bumped by triggers in the transaction of every change it depends on). */
export async function entitlementTableVersion(pool: PgPool): Promise<string> {
  const { rows } = await pool.query<{ version: string }>('SELECT version::text FROM entitlement_table_version');
  return rows[0]!.version;
}
