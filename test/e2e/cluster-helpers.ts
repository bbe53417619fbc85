/**
 * Load and checks for the cluster fault tests: records with ids sent from several connections, each batch
 * retried with the same ids until it gets its 202, and exact counts read from ClickHouse.
 */
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import type { LocalCluster } from '../fixtures/cluster.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';
import { shardIndex } from '../../shared/clickhouse-cluster.js';
import { CLUSTER_SHAPE } from '../../infra/stack/topology.js';

export interface SendReport {
  /** Records sent (each batch once, however often it was retried). */
  sent: number;
  /** Records whose batch got a 202. */
  accepted: number;
  /** Requests answered 503 (or cut off by a dying process) and retried with the same ids. */
  retried: number;
  /** Requests answered 202 after `markAfter` was called. */
  acceptedAfterMark: number;
}

export interface Sender {
  done: Promise<SendReport>;
  /** Records accepted so far. */
  accepted(): number;
  /** From now on, count 202s separately (after a kill). */
  mark(): void;
}

/**
 * Sends `count` records (value 1, ids `<prefix>-<n>`) in batches of `batch` over `connections` concurrent
 * request loops. A batch that is not answered 202 is sent again with the same ids until it is.
 */
export function sendRecords(
  base: string,
  token: string,
  meterId: string,
  prefix: string,
  count: number,
  o: { connections?: number; batch?: number; deadlineMs?: number } = {},
): Sender {
  const batch = o.batch ?? 100;
  const deadline = Date.now() + (o.deadlineMs ?? 240_000);
  let next = 0;
  let accepted = 0;
  let retried = 0;
  let marked = false;
  let acceptedAfterMark = 0;
  const ts = new Date().toISOString();
  const loop = async () => {
    for (;;) {
      const from = next;
      if (from >= count) return;
      next = Math.min(count, from + batch);
      const records = Array.from({ length: next - from }, (_v, i) => ({
        id: `${prefix}-${from + i}`,
        value: 1,
        timestamp: ts,
      }));
      for (;;) {
        if (Date.now() > deadline) throw new Error(`records ${from}..${next} not accepted before the deadline`);
        const r = await callJson(base, token, 'POST', `/v1/meters/${meterId}/usage`, records).catch(() => null);
        if (r?.status === 202 && r.body.accepted === records.length) {
          accepted += records.length;
          if (marked) acceptedAfterMark++;
          break;
        }
        if (r && r.status !== 503) throw new Error(`unexpected ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
        retried++;
        await new Promise((res) => setTimeout(res, 50)); // a client's retry pause, not a wait for a condition
      }
    }
  };
  const done = Promise.all(Array.from({ length: o.connections ?? 8 }, loop)).then(() => ({
    sent: count,
    accepted,
    retried,
    acceptedAfterMark,
  }));
  return { done, accepted: () => accepted, mark: () => (marked = true) };
}

/** Distinct records and their sum for a meter, read through the Distributed table (deduplicated). */
export async function storedCount(
  c: LocalCluster,
  meterId: string,
): Promise<{ records: number; ids: number; sum: string }> {
  const rs = await c.infra.clickhouse.query({
    query: `SELECT count() AS n, uniqExact(record_id) AS ids, toString(sum(value)) AS s FROM usage_records FINAL WHERE meter_id = '${meterId}'`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ n: string; ids: string; s: string }>();
  return { records: Number(row?.n ?? 0), ids: Number(row?.ids ?? 0), sum: row?.s ?? '0' };
}

/**
 * Waits until both replicas of the account's ClickHouse shard hold `expected` of the meter's records: a write is
 * acknowledged once one replica has it, and its twin fetches it asynchronously (docs/operations.md "Durability you
 * get"), while a read may be served by either. Tests assert exact counts after this.
 */
export async function waitForShardReplicas(
  c: LocalCluster,
  accountId: string,
  meterId: string,
  expected: number,
  what: string,
): Promise<void> {
  const shard = shardIndex(accountId, CLUSTER_SHAPE.clickhouseShards) + 1;
  await waitUntil(
    async () => {
      const counts = await countsPerReplica(c, meterId);
      return counts[`clickhouse-s${shard}r1`]! >= expected && counts[`clickhouse-s${shard}r2`]! >= expected;
    },
    what,
    120_000,
    250,
  );
}

/** The deduplicated count of a meter's records on each replica's own local table. */
export async function countsPerReplica(c: LocalCluster, meterId: string): Promise<Record<string, number | null>> {
  const out: Record<string, number | null> = {};
  const replicas = (await c.processes()).filter((p) => p.kind === 'clickhouse');
  const urls = c.config.CLICKHOUSE_URL.split(',');
  for (const p of replicas) {
    const url = urls.find((u) => new URL(u).port === String(p.ports[0]));
    if (!url) continue;
    const ch = createClickhouse(url, c.config.CLICKHOUSE_DATABASE);
    try {
      const rs = await ch.query({
        query: `SELECT count() AS n FROM usage_records_local FINAL WHERE meter_id = '${meterId}'`,
        format: 'JSONEachRow',
      });
      out[p.name] = Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
    } catch {
      out[p.name] = null;
    } finally {
      await ch.close();
    }
  }
  return out;
}

/** Several answers in a row from the shared port know the meter (each api process has its own registry). */
export async function waitForMeterEverywhere(base: string, token: string, meterId: string): Promise<void> {
  let streak = 0;
  await waitUntil(
    async () => {
      const r = await callJson(base, token, 'POST', `/v1/meters/${meterId}/usage`, {}).catch(() => null);
      streak = r?.status === 422 ? streak + 1 : 0;
      return streak >= 12;
    },
    `every api process to know meter ${meterId}`,
    60_000,
  );
}

export function killNow(pid: number): void {
  process.kill(pid, 'SIGKILL');
}

/** Runs `fn` on each named ClickHouse replica's own connection (its local tables), answers by name. */
export async function onReplicas<T>(
  c: LocalCluster,
  names: readonly string[],
  fn: (ch: ReturnType<typeof createClickhouse>) => Promise<T>,
): Promise<Record<string, T>> {
  const out: Record<string, T> = {};
  const replicas = (await c.processes()).filter((p) => names.includes(p.name));
  const urls = c.config.CLICKHOUSE_URL.split(',');
  for (const p of replicas) {
    const url = urls.find((u) => new URL(u).port === String(p.ports[0]));
    if (!url) throw new Error(`no CLICKHOUSE_URL for ${p.name}`);
    const ch = createClickhouse(url, c.config.CLICKHOUSE_DATABASE);
    try {
      out[p.name] = await fn(ch);
    } finally {
      await ch.close();
    }
  }
  return out;
}
