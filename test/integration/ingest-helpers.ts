/**
 * Helpers of the usage ingestion tests (ingest-*, usage-*, consumer-*): meters written the way the control
 * plane writes them (Postgres row + KV record), an api running only the usage modules, an in-process
 * consumer, and exact reads of what ClickHouse holds.
 */
import { Kvm } from '@nats-io/kv';
import type { Config } from '../../shared/config.js';
import type { Infra } from '../../shared/infra.js';
import { newId } from '../../shared/ids.js';
import { putMeter, type MeterRecord, type MeterType } from '../../shared/meters/record.js';
import { ApiService } from '../../services/roles/api/service.js';
import { createAuthenticator } from '../../services/roles/api/authenticator.js';
import { ingressModule } from '../../services/ingress/module.js';
import { usageQueryModule } from '../../services/control/usage/module.js';
import { UsageConsumer, type UsageConsumerOptions } from '../../services/roles/consumer/usage-consumer.js';
import { testInfra, waitUntil, type TestLike } from '../fixtures/env.js';
import { queryUsageTotals } from '../../services/domain/usage/query.js';
import { planHours, readPlan, watermark, type ReadPlan } from '../../services/domain/usage/read-plan.js';
import { isReadFromRollups } from '../../services/domain/usage/hour-marks.js';
import { hourStates } from '../../services/domain/usage/hour-marks-store.js';
import { HOUR_MS } from '../../services/domain/usage/sql.js';

const DAY_MS = 86_400_000;

export interface TestMeter extends MeterRecord {
  unit: string;
}

/** A meter as the control plane creates it: the Postgres row and, before that is visible, its KV record. */
export async function createMeter(
  infra: Infra,
  accountId: string,
  opts: {
    type?: MeterType;
    aggregation?: string;
    status?: 'active' | 'inactive';
    unit?: string;
    uniqueBy?: string;
  } = {},
): Promise<TestMeter> {
  const type = opts.type ?? 'counter';
  const aggregation = opts.aggregation ?? (type === 'gauge' ? 'last' : 'sum');
  const now = new Date();
  const m: TestMeter = {
    id: newId('mtr'),
    account_id: accountId,
    type,
    aggregation,
    status: opts.status ?? 'active',
    updated_at_ms: now.getTime(),
    unit: opts.unit ?? 'requests',
  };
  await infra.pg.query(
    'INSERT INTO meters (id, account_id, name, unit, type, aggregation, status, created_at, updated_at, unique_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9)',
    [m.id, accountId, `meter ${m.id}`, m.unit, type, aggregation, m.status, now, opts.uniqueBy ?? null],
  );
  await putMeter(await new Kvm(infra.nats).open(infra.natsNames.meterBucket), {
    id: m.id,
    account_id: accountId,
    type,
    aggregation,
    status: m.status,
    updated_at_ms: m.updated_at_ms,
  });
  return m;
}

/** Changes a meter's status in both places (what PATCH /v1/meters/{id} does). */
export async function setMeterStatus(infra: Infra, m: TestMeter, status: 'active' | 'inactive'): Promise<void> {
  const now = new Date();
  await infra.pg.query('UPDATE meters SET status = $2, updated_at = $3 WHERE id = $1', [m.id, status, now]);
  m.status = status;
  m.updated_at_ms = now.getTime();
  await putMeter(await new Kvm(infra.nats).open(infra.natsNames.meterBucket), {
    id: m.id,
    account_id: m.account_id,
    type: m.type,
    aggregation: m.aggregation,
    status,
    updated_at_ms: m.updated_at_ms,
  });
}

export interface UsageApi {
  url: string;
  service: ApiService;
  infra: Infra;
}

/** The api role with only the usage modules (ingress + usage query), in-process on a free port. */
export async function startUsageApi(t: TestLike, config: Config): Promise<UsageApi> {
  const infra = await testInfra(t, config, 'api');
  const service = new ApiService(infra, [ingressModule, usageQueryModule], await createAuthenticator(infra));
  await service.start();
  t.teardown(() => service.stop());
  return { url: `http://127.0.0.1:${service.port}`, service, infra };
}

/** The consumer component in-process (the e2e tests run the real role process instead). */
export async function startConsumer(
  t: TestLike,
  config: Config,
  opts: Partial<UsageConsumerOptions> = {},
): Promise<{ consumer: UsageConsumer; infra: Infra }> {
  const infra = await testInfra(t, config, 'consumer');
  const consumer = new UsageConsumer(infra, opts);
  await consumer.start();
  t.teardown(() => consumer.stop());
  return { consumer, infra };
}

/** Waits until the api's registry knows the meter (the KV watch is asynchronous): `{}` then gets 422, not 404. */
export async function waitForMeter(
  api: UsageApi,
  m: MeterRecord,
  authorization: string,
  status: 'active' | 'inactive' = 'active',
): Promise<void> {
  const want = status === 'active' ? 422 : 409;
  await waitUntil(async () => {
    const res = await post(api.url, `/v1/meters/${m.id}/usage`, authorization, {});
    await res.arrayBuffer();
    return res.status === want;
  }, `the ingress registry to see meter ${m.id} ${status}`);
}

export function post(base: string, path: string, authorization: string, body: unknown): Promise<Response> {
  return fetch(base + path, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

export async function postJson(
  base: string,
  path: string,
  authorization: string,
  body: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await post(base, path, authorization, body);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/**
 * Distinct records of a meter as the usage read paths count them (rollups of swept hours, raw rows of the
 * rest; duplicates collapsed) — the records a usage query, an invoice, a test's next read will see. A late
 * record's raw row is visible a few milliseconds before its hour's recomputed rollup, and a live record's a few
 * before its partials (which `GET …/usage` of a meter never corrected reads: docs/usage.md "Partials"); this
 * waits for all of them: the lesser of the two reads.
 */
export async function storedCount(infra: Infra, meterId: string): Promise<number> {
  const rs = await infra.clickhouse.query({
    query: `SELECT any(account_id) AS a, count() AS c FROM usage_records WHERE meter_id = '${meterId}'`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ a: string; c: string }>();
  if (!row || Number(row.c) === 0) return 0;
  const read = { accountId: row.a, meterId, type: 'counter' as const, startMs: 0, endMs: Date.now() + DAY_MS };
  const totals = await queryUsageTotals(infra.clickhouse, infra.config.CLICKHOUSE_DATABASE, [
    read,
    { ...read, neverCorrected: true },
  ]);
  return Math.min(...totals.map((x) => x.count));
}

/** How a usage read of one meter over [startMs, endMs) takes each part of it (services/domain/usage/read-plan.ts). */
export async function meterReadPlan(
  infra: Infra,
  accountId: string,
  meterId: string,
  range: { startMs: number; endMs: number },
): Promise<ReadPlan> {
  const [ch, db] = [infra.clickhouse, infra.config.CLICKHOUSE_DATABASE];
  const meters = `account_id = '${accountId}' AND meter_id = '${meterId}'`;
  return readPlan(
    range.startMs,
    range.endMs,
    await watermark(ch, db),
    await planHours(ch, db, meters, range.startMs, range.endMs),
  );
}

/** Record ids ClickHouse holds for a meter. */
export async function storedIds(infra: Infra, meterId: string): Promise<Set<string>> {
  const rs = await infra.clickhouse.query({
    query: `SELECT DISTINCT record_id FROM usage_records WHERE meter_id = '${meterId}'`,
    format: 'JSONEachRow',
  });
  return new Set((await rs.json<{ record_id: string }>()).map((r) => r.record_id));
}

/** Raw rows (duplicates included) ClickHouse holds for a meter. */
export async function rawRowCount(infra: Infra, meterId: string): Promise<number> {
  const rs = await infra.clickhouse.query({
    query: `SELECT count() AS c FROM usage_records WHERE meter_id = '${meterId}'`,
    format: 'JSONEachRow',
  });
  return Number((await rs.json<{ c: string }>())[0]?.c ?? 0);
}

export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Hours of the meter that a read takes (partly) raw: marked by inserts and not yet recomputed
 * (services/domain/usage/hour-marks.ts). `withOpen` false leaves out the current hour (a small one stays raw until it closes).
 */
export async function pendingHours(infra: Infra, meterId: string, withOpen = true): Promise<number[]> {
  const states = await hourStates(infra.clickhouse, infra.config.CLICKHOUSE_DATABASE, `meter_id = '${meterId}'`);
  const open = Math.floor(Date.now() / HOUR_MS);
  return states.filter((s) => !isReadFromRollups(s) && (withOpen || s.hour < open)).map((s) => s.hour);
}

/** Waits until the settler has recomputed every closed hour of the meter that inserts marked. */
export async function waitSettled(infra: Infra, meterId: string, timeoutMs = 30_000): Promise<void> {
  await waitUntil(
    async () => (await pendingHours(infra, meterId, false)).length === 0,
    'every marked closed hour settled',
    timeoutMs,
    100,
  );
}
