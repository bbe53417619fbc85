import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { shardIndex } from '../../shared/clickhouse-cluster.js';
import { CLUSTER_SHAPE } from '../../infra/stack/topology.js';
import { startLocalCluster } from '../fixtures/cluster.js';
import { createTestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson, cardBody, readUsageUntil, webhookBody } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { StreamClient } from '../fixtures/usage-stream.js';
import {
  countsPerReplica,
  killNow,
  onReplicas,
  sendRecords,
  storedCount,
  waitForMeterEverywhere,
  waitForShardReplicas,
} from './cluster-helpers.js';
import { isSettled } from '../../services/domain/usage/hour-marks.js';
import { hourStates } from '../../services/domain/usage/hour-marks-store.js';
import { chString, HOUR_MS } from '../../services/domain/usage/sql.js';

// The local cluster (METERLINE_TOPOLOGY=cluster: 3 NATS nodes with R3 streams, ClickHouse 2 shards × 2
// replicas on ZooKeeper, two processes of every role) with one server or process killed at a time, under
// load. Records carry ids and a client retries a refused batch with the same ids: every record that got a
// 202 must be counted exactly once. Deadlines are generous: the machine is shared.
t.test('local cluster under node and process kills', async (t) => {
  const c = await startLocalCluster(t, { BILLING_INTERVAL_SECONDS: '1', BILLING_GRACE_SECONDS: '0' });
  const processes = await c.processes();
  t.same(
    processes.map((p) => p.kind).sort(),
    [
      'api',
      'api',
      'billing',
      'billing',
      'clickhouse',
      'clickhouse',
      'clickhouse',
      'clickhouse',
      'consumer',
      'consumer',
      'dispatcher',
      'dispatcher',
      'nats',
      'nats',
      'nats',
      'postgres',
      'zookeeper',
    ],
    'stack status lists every server and role process',
  );
  const apis = processes.filter((p) => p.kind === 'api');
  t.equal(apis[0]!.ports[0], apis[1]!.ports[0], 'the two api processes share one port');

  const account = await createTestAccount(c.infra);
  const token = account.tokens.write;
  const meter = await callJson(c.base, token, 'POST', '/v1/meters', {
    name: 'calls',
    unit: 'call',
    type: 'counter',
    aggregation: 'sum',
  });
  t.equal(meter.status, 201);
  const meterId = meter.body.id as string;
  await waitForMeterEverywhere(c.base, token, meterId);
  let expected = 0;

  await t.test('kill -9 of the USAGE stream leader while 20,000 records stream in', async (t) => {
    const N = 20_000;
    const jsm = await jetstreamManager(c.infra.nats);
    const stream = c.infra.natsNames.usageStream;
    const before = await jsm.streams.info(stream);
    t.equal(before.config.num_replicas, 3, 'the USAGE stream has 3 replicas');
    const sender = sendRecords(c.base, token, meterId, 'nats', N, { connections: 8, batch: 50 });
    await waitUntil(() => sender.accepted() >= N / 4, 'a quarter of the records accepted', 120_000);
    const leader = (await jsm.streams.info(stream)).cluster!.leader!;
    const victim = await c.process(leader);
    killNow(victim.pid);
    sender.mark();
    const report = await sender.done;
    expected += N;
    t.equal(report.accepted, N, 'every batch was eventually accepted');
    t.ok(report.acceptedAfterMark > 0, 'ingest went on after the node died');
    await waitUntil(
      async () => (await storedCount(c, meterId)).records >= expected,
      'every accepted record in ClickHouse',
      180_000,
      250,
    );
    // Seen on one replica: the exact count is asserted once both hold them.
    await waitForShardReplicas(
      c,
      account.accountId,
      meterId,
      expected,
      "both replicas of the account's shard to hold the records",
    );
    const stored = await storedCount(c, meterId);
    t.same(stored.records, expected, 'counted exactly once');
    t.equal(stored.ids, expected);
    t.equal(Number(stored.sum), expected);
    t.comment(
      `NATS kill: sent ${report.sent}, 202 ${report.accepted}, counted ${stored.records}, retried requests ${report.retried} (killed ${leader})`,
    );

    await c.serversUp();
    await waitUntil(
      async () => {
        const info = await jsm.streams.info(stream).catch(() => null);
        const replica = info?.cluster?.replicas?.find((r) => r.name === leader);
        return Boolean(replica?.current && (replica.lag ?? 0) === 0);
      },
      `${leader} to rejoin and catch up`,
      120_000,
      250,
    );
    t.pass(`${leader} rejoined the stream's replicas and caught up`);
    // While a NATS node is gone the api's revocation watch may go unconfirmed past WATCH_MAX_STALENESS_SECONDS
    // and authenticated requests fail closed (503 `unavailable`, by design). The api must recover on its own:
    // every process serves reads again (the port is shared, so several reads in a row reach both) — and keeps
    // serving them for longer than that staleness: a watch still in doubt answers 200 until it is stale, and
    // went stale during the next test once (CI, load 24).
    const steadyMs = c.infra.config.WATCH_MAX_STALENESS_SECONDS * 1000 + 2_000;
    let servingSince: number | undefined;
    await waitUntil(
      async () => {
        for (let i = 0; i < 10; i++) {
          const r = await callJson(c.base, account.tokens.read, 'GET', `/v1/meters/${meterId}`).catch(() => null);
          if (r?.status !== 200) {
            servingSince = undefined;
            return false;
          }
        }
        servingSince ??= performance.now();
        return performance.now() - servingSince >= steadyMs;
      },
      'every api process to serve authenticated reads again, steadily',
      120_000,
      500,
    );
    t.pass('the api processes serve authenticated reads again after the NATS node came back');
  });

  await t.test('kill -9 of a ClickHouse replica during ingest and usage reads', async (t) => {
    const N = 8_000;
    const shard = shardIndex(account.accountId, CLUSTER_SHAPE.clickhouseShards) + 1;
    const victim = await c.process(`clickhouse-s${shard}r1`);
    const twin = `clickhouse-s${shard}r2`;
    const sender = sendRecords(c.base, token, meterId, 'ch', N, { connections: 6, batch: 50 });
    const reads: number[] = [];
    const failures: string[] = [];
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const r = await callJson(c.base, account.tokens.read, 'GET', `/v1/meters/${meterId}/usage?window=day`).catch(
          (err: Error) => ({ status: 0, body: String(err) }),
        );
        reads.push(r.status);
        if (r.status !== 200) failures.push(`${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      }
    })();
    await waitUntil(() => sender.accepted() >= N / 4, 'a quarter of the records accepted', 120_000);
    killNow(victim.pid);
    const readsAtKill = reads.length;
    sender.mark();
    const report = await sender.done;
    expected += N;
    // Rows the consumer inserted into the victim in the second before its kill, not yet fetched by the twin,
    // are on the victim's disk only (replication is asynchronous, docs/operations.md "Durability you get"): they are counted
    // once it is back, checked below. Until then the twin answers reads with what it holds.
    await waitUntil(() => reads.length >= readsAtKill + 20, 'usage reads after the kill');
    reading = false;
    await reader;
    if (failures.length)
      t.comment(
        `failed reads: ${failures.join(' | ')}\nlog: ${c.log
          .filter((l) => /error|fail/i.test(l))
          .slice(-20)
          .join('\n')}`,
      );
    t.same(
      reads.filter((s) => s !== 200),
      [],
      `every usage read answered 200 (${reads.length} reads, ${reads.length - readsAtKill} after the kill)`,
    );
    t.equal(report.accepted, N);
    t.ok(report.acceptedAfterMark > 0, 'inserts went on');

    await c.serversUp();
    await waitUntil(
      async () => {
        const counts = await countsPerReplica(c, meterId);
        return counts[victim.name] === expected && counts[twin] === expected;
      },
      `${victim.name} to come back and replicate what its twin took`,
      180_000,
      500,
    );
    const counts = await countsPerReplica(c, meterId);
    t.equal(counts[victim.name], expected, `${victim.name} holds every record`);
    t.equal(counts[twin], expected, `${twin} holds every record`);
    const other = 3 - shard;
    t.equal(counts[`clickhouse-s${other}r1`], 0, 'the other shard holds none of this account');
    await waitUntil(
      async () => (await storedCount(c, meterId)).records >= expected,
      'every accepted record readable',
      120_000,
      250,
    );
    const stored = await storedCount(c, meterId);
    t.equal(stored.records, expected, 'counted exactly once');
    t.equal(stored.ids, expected);
    // An insert ClickHouse's death cut between its rows and its partials counts in GET usage once its redelivery
    // stores them (docs/usage.md "Partials"): within a bounded wait, then exactly.
    const { usage } = await readUsageUntil(
      c.base,
      account.tokens.read,
      `/v1/meters/${meterId}/usage?window=day`,
      expected,
      'GET usage to count every record',
    );
    t.equal(usage.body.count, expected, 'GET usage shows every record');
    t.comment(
      `ClickHouse kill: sent ${report.sent}, 202 ${report.accepted}, counted ${stored.records} (total ${expected}), reads ${reads.length}, retried requests ${report.retried}`,
    );
  });

  await t.test('kill -9 of an api and of a consumer: the twins take over, the supervisor restarts them', async (t) => {
    const N = 8_000;
    const api = await c.process('api-1');
    const consumer = await c.process('consumer-1');
    const sender = sendRecords(c.base, token, meterId, 'roles', N, { connections: 6, batch: 50 });
    await waitUntil(() => sender.accepted() >= N / 4, 'a quarter of the records accepted', 120_000);
    killNow(api.pid);
    sender.mark();
    await waitUntil(() => sender.accepted() >= N / 2, 'half of the records accepted after the api kill', 120_000);
    killNow(consumer.pid);
    const report = await sender.done;
    expected += N;
    t.equal(report.accepted, N);
    t.ok(report.acceptedAfterMark > 0, 'the other api kept serving on the same port');
    await waitUntil(
      async () => (await storedCount(c, meterId)).records >= expected,
      'every accepted record in ClickHouse',
      180_000,
      250,
    );
    const stored = await storedCount(c, meterId);
    t.equal(stored.records, expected, 'nothing lost or doubled');
    t.equal(Number(stored.sum), expected);
    t.comment(
      `api + consumer kill: sent ${report.sent}, 202 ${report.accepted}, counted ${stored.records} (total ${expected}), retried requests ${report.retried}`,
    );
    await waitUntil(
      async () => {
        const now = await c.processes();
        const a = now.find((p) => p.name === 'api-1');
        const k = now.find((p) => p.name === 'consumer-1');
        return Boolean(a && k && a.pid !== api.pid && k.pid !== consumer.pid);
      },
      'the supervisor to restart api-1 and consumer-1',
      120_000,
      250,
    );
    t.pass('api-1 and consumer-1 run again under new pids');
  });

  await t.test('the usage stream, a read and the console work unchanged on the cluster', async (t) => {
    const stream = await StreamClient.open(c.base, `Bearer ${token}`);
    t.teardown(() => stream.close());
    const FRAMES = 100;
    const PER_FRAME = 50;
    const ts = new Date().toISOString();
    for (let seq = 1; seq <= FRAMES; seq++) {
      stream.send({
        seq,
        records: Array.from({ length: PER_FRAME }, (_v, i) => ({
          id: `ws-${seq}-${i}`,
          meter_id: meterId,
          value: 1,
          timestamp: ts,
        })),
      });
    }
    await stream.waitForAnswers(FRAMES, 'an answer to every frame', 120_000);
    t.same(
      stream.answers.filter((a) => a.accepted !== PER_FRAME).map((a) => a.error ?? a.rejected),
      [],
      'every frame accepted whole (acked after the R3 stream stored it)',
    );
    t.equal(new Set(stream.answers.map((a) => a.seq)).size, FRAMES, 'each frame answered once');
    expected += FRAMES * PER_FRAME;
    await waitUntil(
      async () => (await storedCount(c, meterId)).records >= expected,
      'the streamed records in ClickHouse',
      180_000,
      250,
    );
    t.equal((await storedCount(c, meterId)).records, expected, 'counted exactly once');
    // storedCount saw the rows on one replica. Once both hold them, every read must count them all.
    await waitForShardReplicas(
      c,
      account.accountId,
      meterId,
      expected,
      "both replicas of the account's shard to hold the streamed records",
    );
    // The rollups and settles of the records replicate on their own, in no order between tables: a replica that
    // came back from an earlier kill may hold a settle before the rollup it vouches for and serve the older rollup
    // for a moment (the open replica-lag item, docs/operations.md). Exact within a bounded wait, never above.
    const { usage, counts } = await readUsageUntil(
      c.base,
      account.tokens.read,
      `/v1/meters/${meterId}/usage?window=day`,
      expected,
      'a Distributed read to count every record',
    );
    t.equal(usage.status, 200);
    t.equal(usage.body.count, expected, 'GET usage (Distributed reads) shows every record');
    t.ok(
      counts.every((n) => n <= expected),
      `never more than were sent (${[...new Set(counts)].join(', ')})`,
    );
    const page = await fetch(`${c.base}/console`);
    t.equal(page.status, 200, 'the console is served by the api processes');
    t.match(page.headers.get('content-type'), /^text\/html/);
    t.match(await page.text(), /<div id="app"|<script type="module"/, 'its page');
  });

  await t.test('no replica holds a settle before the rollup it vouches for', async (t) => {
    // Reads go through Distributed tables, which take each table from either replica of a shard, and replication
    // keeps no order between tables. If a settle reached a replica before the rollup it vouches for, a read
    // taking that settle would count the older rollup (records missing). Fetches of the hourly rollups are
    // stopped on both replicas: a settle of the hour must not appear anywhere until they hold its rollup.
    const shard = shardIndex(account.accountId, CLUSTER_SHAPE.clickhouseShards) + 1;
    const names = [`clickhouse-s${shard}r1`, `clickhouse-s${shard}r2`];
    const db = c.config.CLICKHOUSE_DATABASE;
    const late = await callJson(c.base, token, 'POST', '/v1/meters', {
      name: 'late calls',
      unit: 'call',
      type: 'counter',
      aggregation: 'sum',
    });
    t.equal(late.status, 201);
    const lateId = late.body.id as string;
    await waitForMeterEverywhere(c.base, token, lateId);
    const fetches = (verb: 'STOP' | 'START') =>
      onReplicas(c, names, (ch) => ch.command({ query: `SYSTEM ${verb} FETCHES ${db}.usage_hourly_local` }));
    await fetches('STOP');
    t.teardown(() => fetches('START'));
    const hour = Math.floor(Date.now() / HOUR_MS) - 3; // closed and swept: its late records mark it whole
    const N = 300;
    const records = Array.from({ length: N }, (_v, i) => ({
      id: `late-${i}`,
      value: 1,
      timestamp: new Date(hour * HOUR_MS + 60_000 + i).toISOString(),
    }));
    const posted = await callJson(c.base, token, 'POST', `/v1/meters/${lateId}/usage`, records);
    t.equal(posted.status, 202);
    await waitUntil(
      async () => Object.values(await countsPerReplica(c, lateId)).filter((n) => n === N).length === 2,
      'both replicas to hold the late records',
      120_000,
      250,
    );
    // Per replica: whether its marks and settles say the hour is settled, and what its hourly rollup holds.
    const where = `account_id = ${chString(account.accountId)} AND meter_id = ${chString(lateId)} AND hour = ${hour}`;
    const view = () =>
      onReplicas(c, names, async (ch) => {
        const [state] = await hourStates(ch, db, where, '_local');
        const rs = await ch.query({
          query: `SELECT toUInt64(sum(records)) AS n FROM ${db}.usage_hourly_local FINAL WHERE ${where}`,
          format: 'JSONEachRow',
        });
        const rolled = Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
        return { settled: state !== undefined && isSettled(state), rolled };
      });
    // The settler settles a quiet hour within a few seconds: watch long enough for it to have tried.
    const vouched: string[] = [];
    const until = Date.now() + 12_000;
    while (Date.now() < until) {
      for (const [name, v] of Object.entries(await view()))
        if (v.settled && v.rolled !== N) vouched.push(`${name}: settled, rollup holds ${v.rolled} of ${N}`);
      await new Promise((r) => setTimeout(r, 250)); // sampling while the settler works, not waiting for a state
    }
    t.same(vouched, [], 'no replica showed the hour settled without its rollup');
    await fetches('START');
    await waitUntil(
      async () => Object.values(await view()).every((v) => v.settled && v.rolled === N),
      'the hour settled on both replicas, each with its whole rollup',
      120_000,
      500,
    );
    t.pass('once the rollup has replicated the hour is settled everywhere');
  });

  await t.test('two billing processes close one period once; two dispatchers deliver each event once', async (t) => {
    const receiver = await startReceiver(t);
    const operator = await createTestAccount(c.infra, { operator: true });
    const made = async (tok: string, method: string, path: string, body?: unknown) => {
      const r = await callJson(c.base, tok, method, path, body);
      if (r.status >= 300) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const customer = await createTestAccount(c.infra);
    await made(customer.tokens.write, 'POST', '/v1/webhooks', webhookBody(receiver.url('/hook')));
    await made(customer.tokens.write, 'POST', '/v1/billing/payment-methods', cardBody());
    const plans: string[] = [];
    for (let i = 0; i < 3; i++)
      plans.push(
        (
          await made(operator.tokens.admin, 'POST', '/v1/products', {
            name: `Plan ${i}`,
            price: 10 + i,
            currency: 'USD',
          })
        ).id,
      );
    const subs: string[] = [];
    for (const plan of plans)
      subs.push((await made(customer.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] })).id);
    // Created last month: the period has ended, both billing processes find it due at their next tick.
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 5, 10));
    await c.infra.pg.query(
      `UPDATE subscriptions SET created_at = $2, billing_period_start = date_trunc('month', $2::timestamptz, 'UTC') WHERE id = ANY($1)`,
      [subs, lastMonth.toISOString()],
    );
    const invoices = async () =>
      (
        await c.infra.pg.query<{ id: string; subscription_id: string; status: string }>(
          'SELECT id, subscription_id, status FROM invoices WHERE subscription_id = ANY($1)',
          [subs],
        )
      ).rows;
    await waitUntil(
      async () => (await invoices()).filter((i) => i.status === 'paid').length === subs.length,
      'every subscription invoiced and paid',
      120_000,
      250,
    );
    const rows = await invoices();
    t.equal(rows.length, subs.length, 'one invoice per subscription and period');
    t.same(new Set(rows.map((r) => r.subscription_id)).size, subs.length);
    for (const inv of rows) {
      const charges = (
        await c.infra.pg.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM sandbox_charges WHERE idempotency_key LIKE $1`,
          [`${inv.id}:%`],
        )
      ).rows[0]!.n;
      t.equal(charges, 1, `one charge for ${inv.id}`);
    }
    // invoice.created and invoice.paid per invoice, each delivered once (the receiver answers 200 at once).
    const events = subs.length * 2;
    await waitUntil(
      () => new Set(receiver.requests.map((r) => r.headers['x-webhook-id'])).size >= events,
      'every event delivered',
      120_000,
      250,
    );
    await waitUntil(
      async () =>
        (await c.infra.pg.query("SELECT 1 FROM webhook_deliveries WHERE status <> 'succeeded'")).rowCount === 0,
      'every attempt recorded',
      60_000,
      250,
    );
    const perEvent = new Map<string, number>();
    for (const r of receiver.requests)
      perEvent.set(String(r.headers['x-webhook-id']), (perEvent.get(String(r.headers['x-webhook-id'])) ?? 0) + 1);
    t.equal(perEvent.size, events, 'every event arrived');
    t.same(
      [...perEvent.values()].filter((n) => n !== 1),
      [],
      'each event delivered once (one attempt each)',
    );
    const attempts = (await c.infra.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries'))
      .rows[0]!.n;
    t.equal(attempts, events, 'one delivery row per event');
  });
});
