import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { readCredentials } from '../../infra/stack/credentials.js';
import { SERVERS } from '../../infra/stack/servers.js';
import { hostPorts } from '../../infra/stack/topology.js';
import { loginOf } from '../../infra/stack/launch.js';
import { ROLE_NAMES, startDeployment, type DeployedHost, type Deployment } from '../fixtures/hosts.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';
import { makeRelease } from '../fixtures/release.js';
import { startIngest, startReads } from './hosts-load.js';
import { authorizeUrl, createUser, FormBrowser, registerClient } from '../fixtures/oauth.js';
import { FREE_PER_PAIR } from '../../services/control/oauth/sign-in-throttle.js';

// Three hosts (network namespaces on a private bridge) laid out as docs/hosts.md: each runs a NATS
// node, a ZooKeeper node, a ClickHouse replica (one shard, three replicas) and every role; the first also
// Postgres. HAProxy in front of the three api processes. Clients behave as docs/upgrades.md says (records carry
// ids, failed requests are sent again). Deadlines are generous: the machine is shared.

/** Distinct records of a meter on one host's ClickHouse replica (its own local table, deduplicated). */
async function replicaCount(d: Deployment, h: DeployedHost, meterId: string): Promise<number | null> {
  const creds = readCredentials(d.root, { METERLINE_INVENTORY: d.inventory.file, METERLINE_HOST: h.name });
  const url = SERVERS.clickhouse.url(
    hostPorts(d.inventory, 'clickhouse'),
    h.address,
    loginOf(SERVERS.clickhouse, creds.clickhouse, 'admin'),
  );
  const ch = createClickhouse(url, d.config.CLICKHOUSE_DATABASE, { requestTimeoutMs: 5_000 });
  try {
    const rs = await ch.query({
      query: `SELECT count() AS n FROM usage_records_local FINAL WHERE meter_id = '${meterId}'`,
      format: 'JSONEachRow',
    });
    return Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
  } catch {
    return null;
  } finally {
    await ch.close();
  }
}

async function usageCount(d: Deployment, token: string, meterId: string): Promise<{ count: number; value: number }> {
  const r = await callJson(d.base, token, 'GET', `/v1/meters/${meterId}/usage?window=none`);
  return { count: Number(r.body.count ?? -1), value: Number(r.body.value ?? -1) };
}

/**
 * Waits until the api counts every accepted record; on a timeout the failure says what each replica's raw table
 * holds, per host, so a record lost is told apart from one stored but not served.
 */
async function waitReadable(d: Deployment, token: string, meterId: string, accepted: number): Promise<void> {
  let last = { count: -1, value: -1 };
  let lastAnswer = '';
  const seen: string[] = [];
  let seenAt = 0;
  try {
    await waitUntil(
      async () => {
        const r = await callJson(d.base, token, 'GET', `/v1/meters/${meterId}/usage?window=none`);
        last = { count: Number(r.body.count ?? -1), value: Number(r.body.value ?? -1) };
        lastAnswer = `${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
        if (Date.now() - seenAt >= 30_000) {
          seen.push(String(last.count));
          seenAt = Date.now();
        }
        return last.count >= accepted;
      },
      'every accepted record to be readable',
      // A backlog of several hundred thousand records, drained by three consumers taking turns on one account's
      // claim lock on a machine that also runs the three hosts' servers.
      480_000,
      500,
    );
  } catch (err) {
    const names = d.infra.natsNames;
    const jsm = await jetstreamManager(d.infra.nats);
    const c = await jsm.consumers.info(names.usageStream, names.usageConsumer).catch((e) => ({ error: String(e) }));
    const stream = await jsm.streams.info(names.usageStream).catch((e) => ({ error: String(e) }));
    const consumer =
      'error' in c
        ? c
        : {
            pending: c.num_pending,
            ack_pending: c.num_ack_pending,
            redelivered: c.num_redelivered,
            waiting: c.num_waiting,
          };
    const streamState =
      'error' in stream ? stream : { messages: stream.state.messages, leader: stream.cluster?.leader };
    const replicas: Record<string, number | null> = {};
    for (const h of d.hosts) replicas[h.name] = await replicaCount(d, h, meterId);
    const perHost: Record<string, number> = {};
    for (const h of d.hosts)
      perHost[h.name] = await callJson(
        `http://${h.address}:${d.inventory.ports.api}`,
        token,
        'GET',
        `/v1/meters/${meterId}/usage?window=none`,
      )
        .then((r) => Number(r.body.count ?? -1))
        .catch(() => -2);
    const logs = d.hosts
      .map((h) => {
        const file = join(d.root, 'logs', `${h.name}-consumer.log`);
        return `--- ${h.name} consumer:\n${existsSync(file) ? readFileSync(file, 'utf8').slice(-1500) : '(no log)'}`;
      })
      .join('\n');
    throw new Error(
      `${(err as Error).message}: accepted ${accepted}, the api counts ${last.count} (last answer ${lastAnswer}); each api asked directly ${JSON.stringify(perHost)}; each replica's raw rows ${JSON.stringify(replicas)}; the usage consumer ${JSON.stringify(consumer)}, stream ${JSON.stringify(streamState)}; counts while waiting ${seen.join(' ')}\n${logs}`,
    );
  }
}

/** Every api process knows the meter: asked directly, each answers 422 to an empty record. */
async function meterKnownEverywhere(d: Deployment, token: string, meterId: string): Promise<void> {
  for (const h of d.hosts)
    await waitUntil(
      async () =>
        (await callJson(
          `http://${h.address}:${d.inventory.ports.api}`,
          token,
          'POST',
          `/v1/meters/${meterId}/usage`,
          {},
        )
          .then((r) => r.status)
          .catch(() => 0)) === 422,
      `the api on ${h.name} to know meter ${meterId}`,
      60_000,
      100,
    );
}

/** The build each role process of each host reports on its /metrics. */
async function buildsOf(d: Deployment): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const h of d.hosts)
    for (const role of ROLE_NAMES) {
      const port = role === 'api' ? d.inventory.ports.api : d.inventory.ports[`${role}_metrics`];
      const text = await (await fetch(`http://${h.address}:${port}/metrics`)).text().catch(() => '');
      out[`${h.name}/${role}`] = /^meterline_build_info\{[^}]*build="([^"]+)"/m.exec(text)?.[1] ?? 'none';
    }
  return out;
}

/**
 * The ingest beside a host loss and a rolling upgrade: six clients, each a batch of 50 then a 500-ms pause — at most
 * 600 records/s, a steady load the three hosts keep up with on one busy 2-core machine. Unpaced, the clients sent
 * what the apis accepted (≈ 2,600 records/s in CI), faster than nine servers and twelve role processes sharing those
 * two cores stored them, and the test spent minutes draining a backlog that proves nothing more. At 250 ms (up to
 * 1,200/s) a loaded CI machine still ended a slow roll with a 170,000-record backlog it drained at ≈ 200/s, three
 * consumers taking turns on the one account's claim lock (stop 55).
 */
const STEADY_INGEST = { connections: 6, batch: 50, pauseMs: 500 };

// Bring-up, a host loss and a rolling upgrade of 12 processes: minutes on a shared 2-core machine.
t.setTimeout(40 * 60_000);

t.test('three hosts behind HAProxy', async (t) => {
  const started = Date.now();
  const d = await startDeployment(t);
  t.comment(`deployment of ${d.hosts.length} hosts up in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const status = await d.cli(d.hosts[1]!, ['stack', 'status']);
  t.equal(status.code, 0, 'meterline stack status on a host');
  t.same(
    (JSON.parse(status.stdout) as { processes: { kind: string }[] }).processes.map((p) => p.kind).sort(),
    ['api', 'billing', 'clickhouse', 'consumer', 'dispatcher', 'nats', 'zookeeper'],
    'a host lists its servers and the role processes its supervisors run',
  );

  const account = await createTestAccount(d.infra);
  const newMeter = async (name: string, owner = account) => {
    const meter = await callJson(d.base, owner.tokens.write, 'POST', '/v1/meters', {
      name,
      unit: 'call',
      aggregation: 'sum',
    });
    t.equal(meter.status, 201);
    await meterKnownEverywhere(d, owner.tokens.write, meter.body.id as string);
    return meter.body.id as string;
  };

  // Issue 49: HAProxy sent no client address, so every client was the load balancer to the sign-in throttle.
  await t.test('the sign-in throttle through HAProxy: per client, not per load balancer', async (t) => {
    const app = await registerClient(d.infra, { redirectUris: ['https://app.example.com/cb'] });
    const params = { response_type: 'code', client_id: app.clientId, redirect_uri: 'https://app.example.com/cb' };
    const signIn = async (browser: FormBrowser, email: string, password: string) =>
      (await browser.submit(await browser.open(authorizeUrl(d.base, params)), { email, password })).status;
    const owner = await createUser(d.infra);
    // Clients on other loopback addresses of this machine: HAProxy appends each one's to X-Forwarded-For.
    const attacker = new FormBrowser('127.0.0.2', { 'x-forwarded-for': '127.0.0.3' });
    for (let i = 0; i < FREE_PER_PAIR; i++) t.equal(await signIn(attacker, owner.email, `guess ${i}`), 400);
    t.equal(await signIn(attacker, owner.email, owner.password), 429, 'the attacker waits');
    t.equal(
      await signIn(new FormBrowser('127.0.0.3'), owner.email, owner.password),
      303,
      'the owner from another address signs in (and the address the attacker wrote is not the one counted)',
    );
    const unauthenticated = await fetch(`http://${d.net.gateway}:${d.statsPort}/stats;csv`);
    t.equal(unauthenticated.status, 401, 'the stats page asks for its credential');
  });

  await t.test('one host taken away and brought back under ingest and reads', async (t) => {
    const meterId = await newMeter('calls');

    const jsm = await jetstreamManager(d.infra.nats);
    const stream = d.infra.natsNames.usageStream;
    const info = await jsm.streams.info(stream);
    t.equal(info.config.num_replicas, 3, 'the USAGE stream has a replica on each host');

    const ingest = startIngest(d.base, account.tokens.write, meterId, 'h', STEADY_INGEST);
    const reads = startReads(d.base, account.tokens.read, `/v1/meters/${meterId}/usage?window=day`);
    await waitUntil(() => ingest.accepted() >= 3_000, 'ingest to get going', 180_000, 100);

    // The victim: the host leading the USAGE stream (the hardest to lose), never the Postgres host.
    const pgHost = d.hosts[0]!.name;
    await waitUntil(
      async () => {
        const leader = (await jsm.streams.info(stream)).cluster?.leader;
        if (leader && leader !== pgHost) return true;
        await d.infra.nats
          .request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, undefined, { timeout: 5_000 })
          .catch(() => null);
        return false;
      },
      'the USAGE stream leader to be on a host without Postgres',
      60_000,
      2_000,
    );
    const victimName = (await jsm.streams.info(stream)).cluster!.leader!;
    const victim = d.hosts.find((h) => h.name === victimName)!;
    const acceptedBefore = ingest.accepted();
    const readsBefore = reads.reads();

    // The host goes away: its link down and every process on it killed at once.
    const tAway = Date.now();
    victim.net.linkDown();
    const killed = await victim.net.killAll();
    ingest.mark();
    t.comment(
      `${victim.name} taken away (link down, ${killed} processes killed) after ${acceptedBefore} records accepted`,
    );

    await waitUntil(() => ingest.acceptedAfterMark() >= 5_000, 'ingest to go on without the host', 300_000, 200);
    await waitUntil(() => Date.now() - tAway >= 30_000, '30 s without the host', 60_000, 500);
    const acceptedWhileAway = ingest.acceptedAfterMark();
    const readsWhileAway = reads.reads() - readsBefore;
    const lbAway = await d.lbStatus();
    t.equal(lbAway[victim.name], 'DOWN', 'HAProxy took the lost host out');

    // Back: link up, `meterline stack up` (servers from their data directories), the roles' supervisors.
    const tBack = Date.now();
    victim.net.linkUp();
    await d.startServers(victim);
    const serversBackMs = Date.now() - tBack;
    await Promise.all(ROLE_NAMES.map((r) => d.startRole(victim, r)));
    const rolesBackMs = Date.now() - tBack;
    const acceptedAtReturn = ingest.accepted();

    // Catching up: its NATS node is a current replica of USAGE again, its ClickHouse replica holds every record
    // accepted until it came back, HAProxy sends it traffic again.
    await waitUntil(
      async () => {
        const replica = (await jsm.streams.info(stream).catch(() => null))?.cluster?.replicas?.find(
          (r) => r.name === victim.name,
        );
        return Boolean(replica?.current && (replica.lag ?? 0) === 0);
      },
      `${victim.name}'s NATS node to catch up`,
      180_000,
      250,
    );
    const natsCaughtUpMs = Date.now() - tBack;
    await waitUntil(
      async () => ((await replicaCount(d, victim, meterId)) ?? 0) >= acceptedAtReturn,
      `${victim.name}'s ClickHouse replica to hold every record accepted before it came back`,
      300_000,
      500,
    );
    const clickhouseCaughtUpMs = Date.now() - tBack;
    await waitUntil(
      async () => (await d.lbStatus())[victim.name] === 'UP',
      'HAProxy to take the host back',
      60_000,
      250,
    );
    const lbBackMs = Date.now() - tBack;
    // It takes ingest again: direct requests to its api are answered.
    const direct = await callJson(
      `http://${victim.address}:${d.inventory.ports.api}`,
      account.tokens.write,
      'POST',
      `/v1/meters/${meterId}/usage`,
      {},
    );
    t.equal(direct.status, 422, `${victim.name}'s api serves again`);

    await waitUntil(() => ingest.accepted() >= acceptedAtReturn + 2_000, 'ingest after the return', 180_000, 200);
    const report = await ingest.stop();
    const readReport = await reads.stop();

    // Nothing lost, nothing counted twice: through the api, on every replica.
    await waitReadable(d, account.tokens.read, meterId, report.accepted);
    const usage = await usageCount(d, account.tokens.read, meterId);
    t.equal(report.accepted, report.sent, 'every record sent was eventually accepted');
    t.equal(usage.count, report.accepted, 'the api counts every accepted record exactly once');
    t.equal(usage.value, report.accepted, 'and their sum');
    const replicas: Record<string, number | null> = {};
    await waitUntil(
      async () => {
        for (const h of d.hosts) replicas[h.name] = await replicaCount(d, h, meterId);
        return d.hosts.every((h) => replicas[h.name] === report.accepted);
      },
      'every replica to hold every record',
      300_000,
      500,
    );
    t.same(
      Object.values(replicas),
      d.hosts.map(() => report.accepted),
      `each ClickHouse replica holds each record once (${JSON.stringify(replicas)})`,
    );
    t.ok(acceptedWhileAway > 0, `ingest went on while ${victim.name} was away (${acceptedWhileAway} records)`);
    t.equal(readReport.failed, 0, `every read was answered (${readReport.reads} reads, ${readReport.retried} retried)`);
    t.ok(readsWhileAway > 0, `reads were answered while the host was away (${readsWhileAway})`);
    t.comment(
      [
        `host loss (${victim.name}): records sent ${report.sent}, accepted ${report.accepted}, stored ${usage.count} (each replica ${JSON.stringify(replicas)})`,
        `  ingest requests retried ${report.retried} ${JSON.stringify(report.failures)}; accepted while away ${acceptedWhileAway}`,
        `  reads ${readReport.reads}: failed ${readReport.failed}, retried ${readReport.retried}, max attempts ${readReport.maxAttempts}, longest ${readReport.longestMs} ms`,
        `  catch-up from link up: servers ${serversBackMs} ms, roles ${rolesBackMs} ms, NATS replica current ${natsCaughtUpMs} ms, ClickHouse replica complete ${clickhouseCaughtUpMs} ms, HAProxy UP ${lbBackMs} ms`,
      ].join('\n'),
    );
  });

  await t.test('a rolling upgrade: every role process, one at a time, onto a new build under ingest', async (t) => {
    // Three customers, two clients each: the host loss above is one customer's ingest (one claim lock the three
    // consumers take turns on); a deployment serves many, and three let the consumers store in parallel — on a
    // loaded CI machine one customer's backlog after the roll drained at ≈ 200 records/s (stop 55).
    const customers = [];
    for (const [i, owner] of [account, await createTestAccount(d.infra), await createTestAccount(d.infra)].entries())
      customers.push({ owner, meterId: await newMeter(`upgrade ${i}`, owner), prefix: `u${i}` });
    const release = await makeRelease(t, { build: 'release-2' });
    const before = await buildsOf(d);
    t.ok(
      Object.values(before).every((b) => b === 'dev'),
      `every process runs this checkout's build first (${JSON.stringify(before)})`,
    );
    const ingests = customers.map((c) =>
      startIngest(d.base, c.owner.tokens.write, c.meterId, c.prefix, { ...STEADY_INGEST, connections: 2 }),
    );
    const accepted = () => ingests.reduce((n, i) => n + i.accepted(), 0);
    const reads = startReads(d.base, account.tokens.read, `/v1/meters/${customers[0]!.meterId}/usage?window=day`);
    await waitUntil(() => accepted() >= 2_000, 'ingest to get going', 180_000, 100);
    const tStart = Date.now();
    const steps: string[] = [];
    for (const h of d.hosts)
      for (const role of ROLE_NAMES) {
        const t0 = Date.now();
        await d.stopRole(h, role); // SIGTERM: the supervisor drains the role
        const t1 = Date.now();
        await d.startRole(h, role, release);
        const t2 = Date.now();
        if (role === 'api')
          await waitUntil(
            async () => (await d.lbStatus())[h.name] === 'UP',
            `HAProxy to take ${h.name}'s api back`,
            60_000,
            200,
          );
        const s = (ms: number) => (ms / 1000).toFixed(1);
        const lb = role === 'api' ? `, HAProxy ${s(Date.now() - t2)}` : '';
        steps.push(`${h.name}/${role} ${s(Date.now() - t0)} s (stop ${s(t1 - t0)}, start ${s(t2 - t1)}${lb})`);
      }
    const rollMs = Date.now() - tStart;
    const reports = await Promise.all(ingests.map((i) => i.stop()));
    const readReport = await reads.stop();
    const after = await buildsOf(d);
    t.same(
      Object.values(after),
      d.hosts.flatMap(() => ROLE_NAMES.map(() => 'release-2')),
      'every role process of every host runs the new build',
    );
    const stored: number[] = [];
    const drainStart = Date.now();
    for (const [i, c] of customers.entries()) {
      const report = reports[i]!;
      await waitReadable(d, c.owner.tokens.read, c.meterId, report.accepted);
      const usage = await usageCount(d, c.owner.tokens.read, c.meterId);
      stored.push(usage.count);
      t.equal(report.accepted, report.sent, `customer ${i}: every record sent was eventually accepted`);
      t.equal(usage.count, report.accepted, `customer ${i}: none lost, none counted twice`);
      t.equal(usage.value, report.accepted);
    }
    const drainMs = Date.now() - drainStart;
    t.equal(readReport.failed, 0, `every read was answered (${readReport.reads} reads, ${readReport.retried} retried)`);
    const sum = (f: (r: (typeof reports)[number]) => number) => reports.reduce((n, r) => n + f(r), 0);
    const failures: Record<string, number> = {};
    for (const r of reports) for (const [k, v] of Object.entries(r.failures)) failures[k] = (failures[k] ?? 0) + v;
    t.comment(
      [
        `rolling upgrade of ${steps.length} processes in ${(rollMs / 1000).toFixed(0)} s: ${steps.join(', ')}`,
        `  records of ${customers.length} customers sent ${sum((r) => r.sent)}, accepted ${sum((r) => r.accepted)}, stored ${stored.reduce((a, b) => a + b, 0)} (${stored.join(' + ')}), all readable ${(drainMs / 1000).toFixed(0)} s after the roll; requests a client retried ${sum((r) => r.retried)} ${JSON.stringify(failures)}`,
        `  reads ${readReport.reads}: failed ${readReport.failed}, retried ${readReport.retried}, longest ${readReport.longestMs} ms`,
      ].join('\n'),
    );
  });
});
