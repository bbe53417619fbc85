import type { PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { BusyError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import { UNKNOWN_CUSTOMER, UNKNOWN_CUSTOMER_MESSAGE } from '../../../shared/customers/attribution.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { MeterRecord } from '../../../shared/meters/record.js';

import type { CorrectionRow, NewCorrection } from './types.js';

const CORRECTION_COLUMNS =
  'id, account_id, (SELECT a.customer_id FROM accounts a WHERE a.id = usage_corrections.account_id) AS customer_id, meter_id, kind, cancel_ids, replace_start, replace_end, replacement_ids, replacement_rows, state, created_by_user, created_by_client, created_at, applied_at';

/** The meter as the record rules need it; another account's meter is "does not exist". */
export async function meterForCorrection(pg: PgPool, accountId: string, meterId: string): Promise<MeterRecord> {
  const { rows } = await pg.query<MeterRecord>(
    `SELECT id, account_id, type, aggregation, status, name, dimensions, (extract(epoch FROM updated_at) * 1000)::float8 AS updated_at_ms,
            CASE WHEN scope = 'deployment' THEN 'deployment' END AS scope
       FROM meters WHERE id = $1 AND account_id = $2`,
    [meterId, accountId],
  );
  if (!rows[0]) throw new NotFoundError(`Meter ${meterId} does not exist.`);
  if (rows[0].scope === null) delete rows[0].scope;
  return rows[0];
}

export const CUSTOMER_REQUIRED_MESSAGE =
  'is required: a correction of a deployment meter names the customer whose records it corrects (customer or customer_id)';
export const NOT_A_DEPLOYMENT_METER_MESSAGE = 'only corrections of a deployment meter name a customer';

/**
 * The account whose records a correction applies to (issue 49): the meter's own account, or — a deployment meter,
 * whose records are every customer's — the customer the correction names (required; an unknown one → 422
 * unknown_customer). Without it an operator's cancel matched its own account, where no record of the meter is.
 */
export async function correctedAccount(
  pg: PgPool,
  meter: MeterRecord,
  named: { field: 'customer' | 'customer_id'; value: string } | undefined,
): Promise<string> {
  if (meter.scope !== 'deployment') {
    if (named) throw new ValidationError([{ field: named.field, message: NOT_A_DEPLOYMENT_METER_MESSAGE }]);
    return meter.account_id;
  }
  if (!named) throw new ValidationError([{ field: 'customer', message: CUSTOMER_REQUIRED_MESSAGE }]);
  const { rows } = await pg.query<{ id: string }>(
    `SELECT id FROM accounts WHERE ${named.field === 'customer' ? 'external_id' : 'customer_id'} = $1`,
    [named.value],
  );
  if (!rows[0])
    throw new ValidationError(
      [{ field: named.field, message: UNKNOWN_CUSTOMER_MESSAGE }],
      `${named.field}: ${UNKNOWN_CUSTOMER_MESSAGE}`,
      UNKNOWN_CUSTOMER,
    );
  return rows[0].id;
}

/**
 * Runs `fn` holding the meter's correction lock, a Postgres session advisory lock (a dead process's session
 * ends and frees it): a meter's corrections are applied one at a time, in the order they were recorded.
 * Without it two overlapping replaces running at once would each cancel the range before the other stored its
 * records, and both replacements would count in the overlap. Waiting polls pg_try_advisory_lock instead of
 * blocking on a pool connection (waiters holding every connection would starve the holder's own queries); after
 * `waitMs` → 503 busy, nothing done.
 */
export async function withMeterCorrectionLock<T>(
  pg: PgPool,
  accountId: string,
  meterId: string,
  fn: () => Promise<T>,
  waitMs = 30_000,
): Promise<T> {
  const key = `usage-corrections:${accountId}:${meterId}`;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const c = await pg.connect();
    let locked: boolean;
    try {
      locked = (await c.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key]))
        .rows[0]!.locked;
    } catch (err) {
      c.release(true);
      throw err;
    }
    if (locked) {
      try {
        return await fn();
      } finally {
        // A session that can't unlock is destroyed: ending it frees the lock.
        const unlocked = await c.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).then(
          () => true,
          () => false,
        );
        c.release(!unlocked);
      }
    }
    c.release();
    if (Date.now() > deadline)
      throw new BusyError(`Another correction of meter ${meterId} is being applied; retry shortly.`);
    await new Promise((r) => setTimeout(r, 25 + Math.random() * 50));
  }
}

/** Who asked for a correction: the token's subject and client. */
export interface CorrectionActor {
  userId: string;
  clientId: string;
}

/** Records a correction, state pending: the first step, before ClickHouse is touched. */
export async function insertCorrection(
  pg: PgPool,
  accountId: string,
  meterId: string,
  c: NewCorrection,
  by: CorrectionActor,
): Promise<CorrectionRow> {
  const replace = c.kind === 'replace';
  const { rows } = await pg.query<CorrectionRow>(
    `INSERT INTO usage_corrections (id, account_id, meter_id, kind, cancel_ids, replace_start, replace_end, replacement_ids, replacement_rows, created_by_user, created_by_client)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${CORRECTION_COLUMNS}`,
    [
      newId('corr'),
      accountId,
      meterId,
      c.kind,
      replace ? [] : c.ids,
      replace ? new Date(c.startMs) : null,
      replace ? new Date(c.endMs) : null,
      replace ? c.ids : [],
      replace ? c.rows : '',
      by.userId,
      by.clientId,
    ],
  );
  return rows[0]!;
}

/** The last step: ClickHouse holds the correction's effect. */
export async function markCorrectionApplied(pg: PgPool, id: string): Promise<CorrectionRow> {
  const { rows } = await pg.query<CorrectionRow>(
    `UPDATE usage_corrections SET state = 'applied', applied_at = coalesce(applied_at, now()) WHERE id = $1 RETURNING ${CORRECTION_COLUMNS}`,
    [id],
  );
  return rows[0]!;
}

/**
 * One meter's corrections, newest first; an unknown meter or another account's lists nothing. A deployment
 * meter's owner (the operator) lists the corrections of every customer's records of it.
 */
export async function listCorrections(
  pg: PgPool,
  accountId: string,
  meterId: string,
  window: RowWindow,
): Promise<{ rows: CorrectionRow[]; total: number }> {
  return selectPage<CorrectionRow>(
    pg,
    {
      columns: CORRECTION_COLUMNS,
      from: 'usage_corrections',
      where: `meter_id = $2 AND (account_id = $1 OR EXISTS (SELECT 1 FROM meters m WHERE m.id = $2 AND m.account_id = $1 AND m.scope = 'deployment'))`,
      params: [accountId, meterId],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
}

/** A meter's pending corrections, in the order they were recorded. */
export async function pendingCorrectionsOfMeter(
  pg: PgPool,
  accountId: string,
  meterId: string,
): Promise<CorrectionRow[]> {
  const { rows } = await pg.query<CorrectionRow>(
    `SELECT ${CORRECTION_COLUMNS} FROM usage_corrections WHERE state = 'pending' AND account_id = $1 AND meter_id = $2 ORDER BY created_at, id`,
    [accountId, meterId],
  );
  return rows;
}

/** Corrections still pending after `olderThanMs` (their request failed or its process died mid-way), oldest first. */
export async function pendingCorrections(pg: PgPool, olderThanMs: number, limit: number): Promise<CorrectionRow[]> {
  const { rows } = await pg.query<CorrectionRow>(
    `SELECT ${CORRECTION_COLUMNS} FROM usage_corrections WHERE state = 'pending' AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
    [olderThanMs / 1000, limit],
  );
  return rows;
}
