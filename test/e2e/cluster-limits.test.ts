import t from 'tap';
import { request } from 'node:http';
import { startLocalCluster, type LocalCluster } from '../fixtures/cluster.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { StreamClient } from '../fixtures/usage-stream.js';
import { openLimitsBucket, writeOverrides, type LimitOverrides } from '../../shared/limits/account-limits.js';
import { waitForMeterEverywhere } from './cluster-helpers.js';

/**
 * Per-account rate limits on the local cluster (two api processes sharing one port, SO_REUSEPORT), issue 24:
 * each process used to enforce 1/N of an account's limit, so one connection — a WebSocket, a keep-alive
 * emitter — got half of it here. Now the account's token bucket is shared (NATS KV leases): one connection
 * can use the whole limit, and all processes together never let through more than the limit plus one
 * second's burst (plus the twentieth of it each may hold from before, docs/limits.md), however the traffic is
 * spread.
 */

/** A GET over a connection of its own (no keep-alive), so that SO_REUSEPORT may land it on either process. */
function freshGet(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
    (resolve, reject) => {
      const req = request(url, { agent: false, headers }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    },
  );
}

/** The operator's override, seen by every api process (several answers in a row over fresh connections). */
async function setLimits(c: LocalCluster, account: TestAccount, overrides: LimitOverrides): Promise<void> {
  await writeOverrides(
    await openLimitsBucket(c.infra.nats, c.infra.natsNames.limitsBucket),
    account.accountId,
    overrides,
  );
  let streak = 0;
  await waitUntil(
    async () => {
      const r = await freshGet(`${c.base}/v1/meters`, { authorization: `Bearer ${account.tokens.read}` });
      const seen = String(r.headers['ratelimit-policy']) === `"requests";q=${overrides.requests_per_second};w=1`;
      streak = seen ? streak + 1 : 0;
      return streak >= 12;
    },
    'every api process to see the new limits',
    60_000,
  );
}

/**
 * The seconds each api process spent on `route`, as its own /metrics says, scraped over fresh connections until
 * two different answers came (or 60 scrapes): a process that never served the route reports 0. The processes
 * are told apart by these very sums — time spent is never the same to the nanosecond.
 */
async function routeTimeByProcess(base: string, route: string): Promise<Set<number>> {
  const seen = new Set<number>();
  for (let i = 0; i < 60 && seen.size < 2; i++) {
    const text = (await freshGet(`${base}/metrics`)).body;
    const line = text
      .split('\n')
      .find((l) => l.startsWith('meterline_http_request_duration_seconds_sum{') && l.includes(`route="${route}"`));
    seen.add(Number(line?.split(' ').pop() ?? 0));
  }
  return seen;
}

t.test('per-account limits on the cluster: whole for one connection, never above the limit in total', async (t) => {
  const c = await startLocalCluster(t);
  const apis = (await c.processes()).filter((p) => p.kind === 'api');
  t.equal(apis.length, 2, 'two api processes share the port');
  const ts = () => new Date().toISOString();
  /** A meter every api process knows, once what that took has refilled the account's bucket. */
  const meterEverywhere = async (account: TestAccount, name: string): Promise<string> => {
    const meter = await callJson(c.base, account.tokens.write, 'POST', '/v1/meters', {
      name,
      unit: 'u',
      aggregation: 'sum',
    });
    await waitForMeterEverywhere(c.base, account.tokens.write, meter.body.id as string);
    await new Promise((r) => setTimeout(r, 2_000));
    return meter.body.id as string;
  };
  const frame = (meterId: string, seq: number) => ({
    seq,
    records: Array.from({ length: 100 }, (_v, i) => ({
      id: `s${seq}-${i}`,
      meter_id: meterId,
      value: 1,
      timestamp: ts(),
    })),
  });
  /**
   * What the two api processes may hold leased ahead when a measurement begins: each leased from the account's
   * bucket while the meter checks posted to it, and keeps a twentieth of the limit for 30 s once idle
   * (docs/limits.md, "What holds"). Giving that up cost a KV write per record of a customer sending every few
   * seconds.
   */
  const heldAhead = (limit: number) => 2 * Math.floor(limit / 20);
  const recordsAccepted = (stream: StreamClient) => stream.answers.reduce((n, a) => n + (a.accepted ?? 0), 0);

  await t.test('one stream connection uses the account’s whole limit (20,000 records/s)', async (t) => {
    const account = await createTestAccount(c.infra);
    await setLimits(c, account, { ingest_records_per_second: 20_000, requests_per_second: 1_000 });
    const meterId = await meterEverywhere(account, 'streamed');
    const stream = await StreamClient.open(c.base, `Bearer ${account.tokens.write}`);
    t.teardown(() => stream.close());
    for (let seq = 1; seq <= 200; seq++) stream.send(frame(meterId, seq));
    await stream.waitForAnswers(200, 'an answer to every frame', 120_000);
    t.same(
      stream.answers.filter((a) => a.error).map((a) => a.error?.code),
      [],
      'all 200 frames × 100 records, pipelined — exactly one second’s worth — accepted on one connection',
    );
    t.equal(recordsAccepted(stream), 20_000);
  });

  await t.test('one stream connection far over its limit: refused past the limit plus one second', async (t) => {
    const LIMIT = 2_000;
    const account = await createTestAccount(c.infra);
    await setLimits(c, account, { ingest_records_per_second: LIMIT, requests_per_second: 1_000 });
    const meterId = await meterEverywhere(account, 'flooded');
    const stream = await StreamClient.open(c.base, `Bearer ${account.tokens.write}`);
    t.teardown(() => stream.close());
    const started = performance.now();
    for (let seq = 1; seq <= 300; seq++) stream.send(frame(meterId, seq));
    await stream.waitForAnswers(300, 'an answer to every frame', 180_000);
    const elapsed = (performance.now() - started) / 1000;
    const accepted = recordsAccepted(stream);
    const refused = stream.answers.filter((a) => a.error?.code === 'rate_limited').length;
    t.ok(refused > 0, `frames over the limit refused (${refused} of 300)`);
    const alone = c.log.filter((l) => /shared buckets can not be reached/.test(l)).length;
    t.ok(
      accepted <= LIMIT * elapsed + LIMIT + heldAhead(LIMIT),
      `${accepted} records accepted in ${elapsed.toFixed(3)} s ≤ ${LIMIT}/s × ${elapsed.toFixed(3)} s + ${LIMIT}` +
        ` + ${heldAhead(LIMIT)} held ahead (processes that enforced alone, NATS unreachable: ${alone})`,
    );
    t.ok(accepted >= LIMIT, 'at least the first second’s worth');
  });

  await t.test('traffic spread over every process: together never above the limit plus one second', async (t) => {
    const LIMIT = 500;
    const account = await createTestAccount(c.infra);
    await setLimits(c, account, { ingest_records_per_second: LIMIT, requests_per_second: 1_000 });
    const meterId = await meterEverywhere(account, 'spread');
    // 16 emitters, each on its own keep-alive connection, batches of 50 across meters for 6 s.
    let accepted = 0;
    let limited = 0;
    let n = 0;
    const started = performance.now();
    const until = started + 6_000;
    const emitter = async () => {
      while (performance.now() < until) {
        const batch = Array.from({ length: 50 }, () => ({
          id: `p${n++}`,
          meter_id: meterId,
          value: 1,
          timestamp: ts(),
        }));
        const r = await callJson(c.base, account.tokens.write, 'POST', '/v1/usage', batch);
        if (r.status === 202) accepted += r.body.accepted as number;
        else if (r.status === 429) limited++;
        else throw new Error(`unexpected ${r.status}: ${JSON.stringify(r.body)}`);
      }
    };
    await Promise.all(Array.from({ length: 16 }, emitter));
    const elapsed = (performance.now() - started) / 1000;
    t.ok(limited > 0, `the emitters asked for more than the limit (${limited} batches refused)`);
    const alone = c.log.filter((l) => /shared buckets can not be reached/.test(l)).length;
    t.ok(
      accepted <= LIMIT * elapsed + LIMIT + heldAhead(LIMIT),
      `${accepted} records accepted in ${elapsed.toFixed(3)} s ≤ ${LIMIT}/s × ${elapsed.toFixed(3)} s + ${LIMIT}` +
        ` + ${heldAhead(LIMIT)} held ahead (processes that enforced alone, NATS unreachable: ${alone})`,
    );
    t.ok(accepted >= (LIMIT * elapsed) / 2, `and the limit is used, not split away (${accepted})`);
    const perProcess = await routeTimeByProcess(c.base, '/v1/usage');
    t.equal(perProcess.size, 2, `both processes answered (seconds spent on the route: ${[...perProcess].join(', ')})`);
    t.ok(
      [...perProcess].every((s) => s > 0),
      'both served the batches',
    );
  });
});
