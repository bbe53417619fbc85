import type { ClickHouseClient } from '@clickhouse/client';
import type { MeterType } from '../../../shared/meters/record.js';
import { readTaggedParts } from './account-totals-sql.js';
import { ACCOUNT_GROUP, mergedSql, readPlan } from './read-sql.js';
import { planHours, type PlanHours } from './read-plan.js';
import { chString } from './sql.js';
import { stats, watermark, type Row, type UsageReadLimits } from './query.js';
import type { WindowStats } from './stats.js';

/**
 * Each account's total of a meter over one range, for many (meter, range, accounts) at once: what entitlements
 * (and any per-customer limit) need every half second for every metered entitlement of the deployment. It is
 * the usage query's own read — mergedSql over the same read plan (rollups for swept hours, deduplicated raw
 * rows for the rest, cancelled records left out), grouped by account — so a total here equals what
 * `GET /v1/meters/{id}/usage?window=none` answers for that customer and range. All requests whose meters have
 * the same result columns (type, unique count or not) are read by ONE SELECT: a UNION ALL of one part per
 * distinct (range, unique dimension), each part tagged with its index.
 */
export interface AccountTotalsRequest {
  meterId: string;
  type: MeterType;
  /** Only for a unique_count meter: the dimension whose distinct values are counted. */
  uniqueBy?: string;
  startMs: number;
  endMs: number;
  accounts: readonly string[];
  /** Only the records whose dimension `key` is `value`; absent: all. */
  dimension?: { key: string; value: string };
}

/** Past this many accounts of one meter in one part, the part reads every account of the meter (a short SQL text) and keeps the wanted ones. */
const LISTED_ACCOUNTS_MAX = 200;

/** Each request's totals by account, in request order; an account without usage in the range is absent (count 0). */
export async function queryAccountTotals(
  ch: ClickHouseClient,
  database: string,
  requests: readonly AccountTotalsRequest[],
  limits: UsageReadLimits = {},
): Promise<Map<string, WindowStats>[]> {
  const out = requests.map(() => new Map<string, WindowStats>());
  if (!requests.length) return out;
  const swept = await watermark(ch, database);
  // shape (result columns) → part key (range, unique dimension) → request indexes
  const shapes = new Map<string, Map<string, number[]>>();
  requests.forEach((r, i) => {
    const shape = `${r.type}:${r.uniqueBy === undefined ? '' : 'u'}`;
    const part = `${Math.trunc(r.startMs)}:${Math.trunc(r.endMs)}:${r.uniqueBy ?? ''}:${r.dimension ? JSON.stringify(r.dimension) : ''}`;
    let parts = shapes.get(shape);
    if (!parts) shapes.set(shape, (parts = new Map()));
    const list = parts.get(part);
    if (list) list.push(i);
    else parts.set(part, [i]);
  });
  await Promise.all(
    [...shapes.values()].map(async (parts) => {
      const partList = [...parts.values()];
      const sqls = await Promise.all(
        partList.map(async (indexes) => {
          const meters = metersOf(requests, indexes);
          const first = requests[indexes[0]!]!;
          const hours = await planHours(ch, database, meters, first.startMs, first.endMs);
          return partSql(database, requests, indexes, meters, swept, hours);
        }),
      );
      const rows = await readTaggedParts(ch, sqls, limits);
      // part → meter → account → row
      const found = new Map<string, Row>();
      for (const row of rows) found.set(`${Number(row.r)}\u0000${row.m}\u0000${row.g0}`, row);
      partList.forEach((indexes, p) => {
        for (const i of indexes) {
          const q = requests[i]!;
          for (const account of q.accounts) {
            const row = found.get(`${p}\u0000${q.meterId}\u0000${account}`);
            if (row) out[i]!.set(account, stats(q.startMs, q.endMs, row));
          }
        }
      });
    }),
  );
  return out;
}

/** The condition selecting a part's (meter, account) pairs. */
function metersOf(requests: readonly AccountTotalsRequest[], indexes: readonly number[]): string {
  const accountsOf = new Map<string, Set<string>>();
  for (const i of indexes) {
    const q = requests[i]!;
    let set = accountsOf.get(q.meterId);
    if (!set) accountsOf.set(q.meterId, (set = new Set()));
    for (const a of q.accounts) set.add(a);
  }
  const wholeMeters: string[] = [];
  const pairs: string[] = [];
  for (const [meter, accounts] of accountsOf) {
    if (accounts.size > LISTED_ACCOUNTS_MAX) wholeMeters.push(chString(meter));
    else for (const a of accounts) pairs.push(`(${chString(a)}, ${chString(meter)})`);
  }
  const conditions = [
    ...(wholeMeters.length ? [`meter_id IN (${wholeMeters.join(', ')})`] : []),
    ...(pairs.length ? [`(account_id, meter_id) IN (${pairs.join(', ')})`] : []),
  ];
  return conditions.length > 1 ? `(${conditions.join(' OR ')})` : conditions[0]!;
}

/** One part: the requests of one range, unique dimension and dimension filter, grouped by meter and account. */
function partSql(
  database: string,
  requests: readonly AccountTotalsRequest[],
  indexes: readonly number[],
  meters: string,
  swept: number | undefined,
  hours: PlanHours,
): string {
  const first = requests[indexes[0]!]!;
  return mergedSql(
    database,
    first.type,
    meters,
    readPlan(first.startMs, first.endMs, swept, hours),
    () => 'meter_id AS m',
    'm',
    undefined,
    {
      groupBy: [ACCOUNT_GROUP],
      uniqueBy: first.uniqueBy,
      ...(first.dimension ? { filters: new Map([[first.dimension.key, [first.dimension.value]]]) } : {}),
    },
  );
}
