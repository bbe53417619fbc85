/**
 * The SQL of record identity (claims.ts: the rules): looking a batch's identities up in usage_claims, and storing
 * claims.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { Readable } from 'node:stream';
import { chString } from './sql.js';
import { CLAIMS_TABLE, identityKey, type Claim } from './claims.js';

/** Meters per lookup SELECT (one IN subquery each), and ids per meter and SELECT. */
const LOOKUP_METERS = 50;
const LOOKUP_IDS = 50_000;

/**
 * The condition selecting the claims of `ids` of one meter: the hashes are computed by ClickHouse from ONE array
 * literal (18.16 parses `[…]` of literals as one value, while an IN list of 50,000 elements passes
 * max_ast_elements and is evaluated element by element), and `id_hash IN (subquery)` uses the table's key
 * (use_index_for_in_with_subqueries): per id and part one granule of the meter's hashes is read.
 */
export function claimsOfSql(account: string, meter: string, ids: Iterable<string>): string {
  const prefix = `${account}\u0000${meter}\u0000`;
  const list = [...ids].map((id) => chString(prefix + id)).join(', ');
  return `(account_id = ${chString(account)} AND meter_id = ${chString(meter)} AND id_hash IN (SELECT reinterpretAsUInt64(substring(MD5(arrayJoin([${list}])), 1, 8))))`;
}

/**
 * Which of `rows`' identities are claimed, with the timestamps they were claimed under (hash matches are
 * compared in full here).
 */
export async function claimedIdentities(
  ch: ClickHouseClient,
  database: string,
  rows: readonly { account: string; meter: string; id: string }[],
  local = '',
): Promise<Map<string, Claim[]>> {
  const out = new Map<string, Claim[]>();
  const wanted = new Set<string>();
  const byMeter = new Map<string, { account: string; meter: string; ids: Set<string> }>();
  for (const r of rows) {
    wanted.add(identityKey(r.account, r.meter, r.id));
    const k = `${r.account}\u0000${r.meter}`;
    let e = byMeter.get(k);
    if (!e) byMeter.set(k, (e = { account: r.account, meter: r.meter, ids: new Set() }));
    e.ids.add(r.id);
  }
  const conditions: string[] = [];
  for (const e of byMeter.values()) {
    const ids = [...e.ids];
    for (let i = 0; i < ids.length; i += LOOKUP_IDS)
      conditions.push(claimsOfSql(e.account, e.meter, ids.slice(i, i + LOOKUP_IDS)));
  }
  for (let i = 0; i < conditions.length; i += LOOKUP_METERS) {
    const query = `SELECT account_id AS a, meter_id AS m, record_id AS r, ts_ms AS t, claimed_ms AS c, batch AS b FROM ${database}.${CLAIMS_TABLE}${local} WHERE ${conditions.slice(i, i + LOOKUP_METERS).join(' OR ')}`;
    const rs = await ch.query({
      query,
      format: 'JSONEachRow',
      clickhouse_settings: { max_query_size: String(Math.max(262_144, 2 * query.length)) },
    });
    type Row = { a: string; m: string; r: string; t: string | number; c: string | number; b: string | number };
    for (const { a, m, r, t, c, b } of await rs.json<Row>()) {
      const k = identityKey(a, m, r);
      if (!wanted.has(k)) continue; // another identity with the same hash
      const claim = { ts: Number(t), claimed: Number(c), batch: Number(b) };
      const list = out.get(k);
      if (list) list.push(claim);
      else out.set(k, [claim]);
    }
  }
  return out;
}

/** usage_claims' columns as written (id_hash is computed by ClickHouse). */
const CLAIM_COLUMNS = ['account_id', 'meter_id', 'record_id', 'ts_ms', 'claimed_ms', 'batch'] as const;

/** Stores claims: TabSeparated lines (claims.ts claimOf), as strings or in one buffer (the migration's column order). */
export async function insertClaims(
  ch: ClickHouseClient,
  database: string,
  claims: Uint8Array | readonly string[],
  local = '',
): Promise<void> {
  if (claims.length === 0) return;
  const bytes = claims instanceof Uint8Array ? claims : Buffer.from(claims.join(''));
  await ch.insert({
    table: `${database}.${CLAIMS_TABLE}${local}`,
    values: Readable.from([bytes], { objectMode: false }),
    format: 'TabSeparated',
    columns: [...CLAIM_COLUMNS],
  });
}
