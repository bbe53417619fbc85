/**
 * Applying a usage correction to ClickHouse (issue 18; the log and its states are in Postgres,
 * services/control/corrections/). Every step is idempotent — cancellation rows and replacement rows land in
 * ReplacingMergeTree tables, a recompute may run any number of times — so a correction interrupted half-way
 * is completed by applying it again.
 */
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { chString, HOUR_MS, recomputeHours, ROLLUP_TABLE } from './rollups-store.js';
import { markWholeHours } from './hour-marks-store.js';
import { CANCELLATIONS_TABLE } from './cancellations-store.js';
import { USAGE_COLUMNS, USAGE_TABLE } from '../../../shared/usage/wire.js';
import type { UsageShard } from '../../../shared/clients/usage-shards.js';
import { UNIQUE_METERS_TABLE, UNIQUE_ROLLUP_TABLE } from './unique-rollups-store.js';
import { CLAIMS_TABLE, claimsOfPayload } from './claims.js';
import { claimsOfSql, insertClaims } from './claims-store.js';

/** A correction as ClickHouse needs it. */
export interface CorrectionWork {
  id: string;
  accountId: string;
  meterId: string;
  /** cancel: the record ids named. */
  cancelIds: readonly string[];
  /** replace: every record of the meter in [startMs, endMs) but `ids` is cancelled, and `rows` (TSV) inserted. */
  replace?: { startMs: number; endMs: number; ids: readonly string[]; rows: string };
}

/** Hour of a cancellation whose record id no stored record had (yet). */
const UNKNOWN_HOUR = -1;

const idList = (ids: readonly string[]) => ids.map(chString).join(', ');

/**
 * Cancels the correction's records on the account's shard, stores its replacement records, and recomputes
 * the rollups of every hour it touched — in that order, so a read never counts a cancelled record once this
 * returned. The cancelled records' hours come from the stored rows themselves.
 */
export async function applyCorrectionToUsage(
  shard: UsageShard,
  database: string,
  c: CorrectionWork,
  now = Date.now(),
): Promise<void> {
  const { local } = shard;
  const meter = `account_id = ${chString(c.accountId)} AND meter_id = ${chString(c.meterId)}`;
  const cancellations = `${database}.${CANCELLATIONS_TABLE}${local}`;
  const hours = new Set<number>();
  // On a cluster: this replica holds every record its twins have before we look records up.
  await shard.syncReplica(USAGE_TABLE);
  await shard.replicas.run(async (ch) => {
    if (c.cancelIds.length) {
      const rs = await ch.query({
        query: `SELECT DISTINCT record_id AS id, intDiv(ts_ms, ${HOUR_MS}) AS h FROM ${database}.${USAGE_TABLE}${local} WHERE ${meter} AND record_id IN (${idList(c.cancelIds)})`,
        format: 'JSONEachRow',
      });
      const found = await rs.json<{ id: string; h: string | number }>();
      const seen = new Set(found.map((r) => r.id));
      const rows = [
        ...found.map((r) => ({ id: r.id, hour: Number(r.h) })),
        ...c.cancelIds.filter((id) => !seen.has(id)).map((id) => ({ id, hour: UNKNOWN_HOUR })),
      ].map(({ id, hour }) => ({
        account_id: c.accountId,
        meter_id: c.meterId,
        record_id: id,
        hour,
        correction_id: c.id,
        cancelled_ms: now,
      }));
      for (const r of rows) if (r.hour !== UNKNOWN_HOUR) hours.add(r.hour);
      await ch.insert({ table: `${database}.${CANCELLATIONS_TABLE}${local}`, values: rows, format: 'JSONEachRow' });
    }
    const r = c.replace;
    if (r) {
      const range = `ts_ms >= ${Math.trunc(r.startMs)} AND ts_ms < ${Math.trunc(r.endMs)}`;
      const keep = r.ids.length ? ` AND record_id NOT IN (${idList(r.ids)})` : '';
      await ch.command({
        query: `INSERT INTO ${cancellations} (account_id, meter_id, record_id, hour, correction_id, cancelled_ms)
          SELECT DISTINCT account_id, meter_id, record_id, intDiv(ts_ms, ${HOUR_MS}), ${chString(c.id)}, ${now}
          FROM ${database}.${USAGE_TABLE}${local} WHERE ${meter} AND ${range}${keep}`,
      });
      if (r.rows) {
        // Claimed first, as the consumer does (services/domain/usage/claims.ts): a later record with one of these ids is a duplicate.
        const claims = claimsOfPayload(Buffer.from(r.rows), now);
        await insertClaims(ch, database, claims, local);
        await ch.insert({
          table: `${database}.${USAGE_TABLE}${local}`,
          values: Readable.from([Buffer.from(r.rows)], { objectMode: false }),
          format: 'TabSeparated',
          columns: [...USAGE_COLUMNS],
        });
      }
      for (let h = Math.floor(r.startMs / HOUR_MS); h * HOUR_MS < r.endMs; h++) hours.add(h);
    }
  });
  if (hours.size === 0) return shard.syncEveryReplica(CANCELLATIONS_TABLE);
  await shard.syncReplica(CANCELLATIONS_TABLE);
  await shard.syncReplica(USAGE_TABLE);
  await shard.syncReplica(UNIQUE_METERS_TABLE);
  await shard.replicas.run(async (ch) => {
    // Marked whole: its cancellations and replacements are in no minute rollup (services/domain/usage/hour-marks.ts).
    await markWholeHours(ch, database, c.accountId, c.meterId, hours, Date.now(), local);
    await recomputeHours(ch, database, [{ accountId: c.accountId, meterId: c.meterId, hours }], local);
  });
  // A read after the 201 may be served by the shard's other replica: it must hold every write by then.
  for (const table of [CANCELLATIONS_TABLE, USAGE_TABLE, ROLLUP_TABLE, UNIQUE_ROLLUP_TABLE])
    await shard.syncEveryReplica(table);
}

/**
 * Which of `ids` a replacement of [startMs, endMs) may not use: the id of a record stored in the range (it is
 * about to be cancelled, and a cancellation is by id), of a record cancelled before, or of any record of the meter
 * stored under another timestamp (an id is one record whatever its timestamp: services/domain/usage/claims.ts).
 */
export async function takenRecordIds(
  ch: ClickHouseClient,
  database: string,
  accountId: string,
  meterId: string,
  ids: readonly string[],
  startMs: number,
  endMs: number,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const meter = `account_id = ${chString(accountId)} AND meter_id = ${chString(meterId)} AND record_id IN (${idList(ids)})`;
  const rs = await ch.query({
    query: `SELECT record_id AS id FROM ${database}.${USAGE_TABLE} WHERE ${meter} AND ts_ms >= ${Math.trunc(startMs)} AND ts_ms < ${Math.trunc(endMs)}
      UNION ALL SELECT record_id AS id FROM ${database}.${CANCELLATIONS_TABLE} WHERE ${meter}
      UNION ALL SELECT record_id AS id FROM ${database}.${CLAIMS_TABLE} WHERE ${claimsOfSql(accountId, meterId, ids)} AND ${meter}`,
    format: 'JSONEachRow',
  });
  return new Set((await rs.json<{ id: string }>()).map((r) => r.id));
}

/**
 * Of `ids`, those of records of the meter (and account) stored and still counting: what a cancel of them stops
 * counting — the answer reports it (issue 49: a cancel that matched nothing said "applied" all the same).
 */
export async function countingRecordIds(
  ch: ClickHouseClient,
  database: string,
  accountId: string,
  meterId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const meter = `account_id = ${chString(accountId)} AND meter_id = ${chString(meterId)} AND record_id IN (${idList(ids)})`;
  // Two reads, not `NOT IN (SELECT …)`: on a cluster both tables are Distributed, and a distributed subquery inside a
  // distributed query is refused (distributed_product_mode = deny).
  const idsOf = async (table: string) => {
    const rs = await ch.query({
      query: `SELECT DISTINCT record_id AS id FROM ${database}.${table} WHERE ${meter}`,
      format: 'JSONEachRow',
    });
    return (await rs.json<{ id: string }>()).map((r) => r.id);
  };
  const [stored, cancelled] = await Promise.all([idsOf(USAGE_TABLE), idsOf(CANCELLATIONS_TABLE)]);
  const gone = new Set(cancelled);
  return new Set(stored.filter((id) => !gone.has(id)));
}
