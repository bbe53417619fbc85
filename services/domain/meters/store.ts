import { reserveQuota } from '../../../shared/limits/quota.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { newId, hasPrefix } from '../../../shared/ids.js';
import {
  ConflictError,
  InsufficientScopeError,
  NotFoundError,
  ValidationError,
  type FieldError,
} from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { MeterChange, MeterRecordPut, MeterRow, NewMeter } from './types.js';

const notFound = (id: string) => new NotFoundError(`No meter ${id}.`);
// Millisecond precision: the KV record's updated_at_ms must equal the column exactly.
const NOW_MS = "date_trunc('milliseconds', now())";

/** A key another meter of the same owner holds: 409 naming the field, never a 500 (meters_key_per_owner). */
async function keyTaken<T>(key: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const e = err as { code?: string; constraint?: string };
    if (e.code === '23505' && e.constraint === 'meters_key_per_owner')
      throw new ConflictError(`Another meter already has the key ${key}.`, 'meter_key_taken', [
        { field: 'key', message: 'is taken by another meter' },
      ]);
    throw err;
  }
}

export async function listMeters(
  pool: PgPool,
  accountId: string,
  q: { status?: string; key?: string },
  window: RowWindow,
): Promise<{ rows: MeterRow[]; total: number }> {
  return selectPage<MeterRow>(
    pool,
    {
      columns: '*',
      from: 'meters',
      // The account's meters and the deployment's (operator mode): every customer sees those.
      where:
        "(account_id = $1 OR scope = 'deployment') AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR key = $3)",
      params: [accountId, q.status ?? null, q.key ?? null],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
}

export async function getMeter(pool: PgPool, accountId: string, id: string): Promise<MeterRow> {
  if (!hasPrefix(id, 'mtr')) throw notFound(id);
  const r = await pool.query<MeterRow>({
    name: 'meter-get',
    text: "SELECT * FROM meters WHERE id = $1 AND (account_id = $2 OR scope = 'deployment')",
    values: [id, accountId],
  });
  if (!r.rows[0]) throw notFound(id);
  return r.rows[0];
}

/**
 * Row and registry record in one flow: the KV put happens before COMMIT, so a KV failure leaves no meter. A
 * unique_count meter is registered for per-hour distinct sets (`registerUnique`) before the KV put makes it
 * usable; a registration left by a rolled-back create names a meter id nothing will ever use.
 */
export async function createMeter(
  pool: PgPool,
  registry: MeterRecordPut,
  accountId: string,
  m: NewMeter,
  maxMeters: number,
  registerUnique: (meterId: string, uniqueBy: string) => Promise<void>,
): Promise<MeterRow> {
  return keyTaken(m.key, () =>
    withTransaction(pool, async (c) => {
      await reserveQuota(c, 'meters', accountId, maxMeters);
      const r = await c.query<MeterRow>(
        `INSERT INTO meters (id, account_id, name, unit, type, aggregation, dimensions, unique_by, scope, key, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'active', ${NOW_MS}, ${NOW_MS}) RETURNING *`,
        [newId('mtr'), accountId, m.name, m.unit, m.type, m.aggregation, m.dimensions, m.uniqueBy, m.scope, m.key],
      );
      if (m.uniqueBy !== null) await registerUnique(r.rows[0]!.id, m.uniqueBy);
      await registry.put(r.rows[0]!, r.rows[0]!.key !== null);
      return r.rows[0]!;
    }),
  );
}

/**
 * Changes name, unit or status under the row lock. type and aggregation are fixed once created (usage already
 * stored was aggregated under them): a change asking for different ones is refused (422) before any write. A
 * deployment meter is every customer's: only an operator (`asOperator`, an admin token) changes it (403).
 */
export async function updateMeter(
  pool: PgPool,
  registry: MeterRecordPut,
  accountId: string,
  id: string,
  change: MeterChange,
  asOperator: boolean,
): Promise<MeterRow> {
  if (!hasPrefix(id, 'mtr')) throw notFound(id);
  return keyTaken(change.key, () =>
    withTransaction(pool, async (c) => {
      const cur = await c.query<MeterRow>(
        "SELECT * FROM meters WHERE id = $1 AND (account_id = $2 OR scope = 'deployment') FOR UPDATE",
        [id, accountId],
      );
      if (!cur.rows[0]) throw notFound(id);
      if (cur.rows[0].scope === 'deployment' && !asOperator) throw new InsufficientScopeError('admin');
      refuseFixedFieldChanges(cur.rows[0], change);
      const r = await c.query<MeterRow>(
        `UPDATE meters SET name = COALESCE($2, name), unit = COALESCE($3, unit), status = COALESCE($4, status),
         dimensions = COALESCE($5, dimensions), key = COALESCE($6, key), updated_at = ${NOW_MS}
        WHERE id = $1 RETURNING *`,
        [
          id,
          change.name ?? null,
          change.unit ?? null,
          change.status ?? null,
          change.dimensions ?? null,
          change.key ?? null,
        ],
      );
      await registry.put(r.rows[0]!, cur.rows[0].key === null && r.rows[0]!.key !== null);
      return r.rows[0]!;
    }),
  );
}

function refuseFixedFieldChanges(current: MeterRow, change: MeterChange): void {
  const fixed: FieldError[] = [];
  if (change.type !== undefined && change.type !== current.type)
    fixed.push({ field: 'type', message: 'cannot be changed after the meter is created' });
  // Emitters send the key in place of the id: changing it would turn their records into 404s.
  if (change.key !== undefined && current.key !== null && change.key !== current.key)
    throw new ConflictError(
      `Meter ${current.id} already has the key ${current.key}; a key is fixed once set.`,
      'meter_key_fixed',
      [{ field: 'key', message: 'cannot be changed once set' }],
    );
  if (change.aggregation !== undefined && change.aggregation !== current.aggregation) {
    fixed.push({ field: 'aggregation', message: 'cannot be changed after the meter is created' });
  }
  if (change.dimensions !== undefined) {
    const removed = current.dimensions.filter((d) => !change.dimensions!.includes(d));
    if (removed.length)
      fixed.push({
        field: 'dimensions',
        message: `declared dimensions can be added, not removed (missing: ${removed.join(', ')})`,
      });
    // An open meter (no declared keys) that starts declaring must keep accepting its unique_by dimension.
    if (current.unique_by && change.dimensions.length > 0 && !change.dimensions.includes(current.unique_by)) {
      fixed.push({
        field: 'dimensions',
        message: `must include ${current.unique_by}, the meter's unique_by dimension`,
      });
    }
  }
  if (fixed.length) throw new ValidationError(fixed);
}

/** Every meter of every account, in id order, `limit` at a time after `afterId` (the registry's reconciliation). */
export async function metersAfter(pg: PgPool, afterId: string, limit: number): Promise<MeterRow[]> {
  const { rows } = await pg.query<MeterRow>('SELECT * FROM meters WHERE id > $1 ORDER BY id LIMIT $2', [
    afterId,
    limit,
  ]);
  return rows;
}

/** The meter row, locked for the caller's transaction; null when it does not exist. */
export async function lockMeter(client: PgClient, id: string): Promise<MeterRow | null> {
  const { rows } = await client.query<MeterRow>('SELECT * FROM meters WHERE id = $1 FOR UPDATE', [id]);
  return rows[0] ?? null;
}

/**
 * The declared dimensions of the account's meters among `ids`, and of the deployment's (operator mode: each
 * customer's own usage of them); a meter of another account is absent.
 */
/** Which of `ids` are the account's own meters (not deployment meters): self-reported usage. */
export async function ownMeterIds(client: PgClient, accountId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await client.query<{ id: string }>(
    "SELECT id FROM meters WHERE id = ANY($1) AND account_id = $2 AND scope <> 'deployment'",
    [ids, accountId],
  );
  return new Set(rows.map((m) => m.id));
}

export async function meterDimensions(
  client: PgClient,
  accountId: string,
  ids: string[],
): Promise<Map<string, string[]>> {
  if (ids.length === 0) return new Map();
  const { rows } = await client.query<{ id: string; dimensions: string[] }>(
    "SELECT id, dimensions FROM meters WHERE id = ANY($1) AND (account_id = $2 OR scope = 'deployment')",
    [ids, accountId],
  );
  return new Map(rows.map((m) => [m.id, m.dimensions]));
}
