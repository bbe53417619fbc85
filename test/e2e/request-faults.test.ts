import t from 'tap';
import type { Test } from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApiProcess, type ApiProcess } from '../fixtures/api-process.js';
import { fetchFrom } from '../fixtures/oauth.js';
import { StreamClient } from '../fixtures/usage-stream.js';
import { AT_REST, intakeCounters, metricSum } from '../fixtures/budget-counters.js';
import {
  chunk,
  chunkedPostHead,
  maskedTextFrame,
  postHead,
  rawBody,
  rawRequest,
  rawStatus,
  rawWebSocket,
  refusesConnections,
  type RawExchange,
} from '../fixtures/raw-http.js';

/**
 * The fault harness of issue 24: clients that announce a body and never finish it — gone after the headers,
 * after part of the body, before its last byte or last chunk; fixed length and chunked — clients that
 * trickle, one caller holding more than its share, WebSockets left half-open. Against both ingest routes, the
 * control plane, the OAuth token endpoint and the sign-in form (the last two read before any authentication)
 * of an api process, each time: the intake counters in /metrics return to rest (no byte reserved, no body
 * being read, only the scrape in flight), another account and another client are served meanwhile, /readyz
 * says so, and at the end a SIGTERM drain finishes as soon as the faulty clients are gone
 * (SHUTDOWN_DRAIN_SECONDS is 120: a wedged request would hold the process that long).
 *
 * Two api processes on the same stack: `patient` reads bodies for up to a minute, so only what the clients do
 * ends their requests (no read deadline comes to the rescue); `hasty` has a 2 s read deadline, for the
 * trickled bodies. Both hold 8 MiB of bodies at most, 1 MiB per caller.
 *
 * The issue's other findings have their own tests against real api processes: parallel wrong passwords over
 * two processes (test/integration/sign-in-throttle.test.ts), an oversized batch that costs no rate and the
 * RateLimit fields on 2xx (test/integration/account-limits.test.ts), limits that hold cluster-wide
 * (test/e2e/cluster-limits.test.ts), strict query integers (test/integration/products.test.ts), the NATS
 * monitor and the ClickHouse interserver port (test/e2e/stack-auth.test.ts).
 */
const KIB = 1024;
const MIB = 1024 * KIB;
const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';

interface Door {
  name: string;
  path: string;
  authorization?: string;
  type: string;
  /** Bytes each faulty request announces. */
  size: number;
  /** `n` bytes of a body that would be acceptable if it ever ended. */
  body(n: number): string;
}

interface Stage {
  name: string;
  chunked: boolean;
  open(d: Door, port: number): Promise<RawExchange>;
}

const STAGES: Stage[] = [
  {
    name: 'fixed length, gone after the headers',
    chunked: false,
    open: (d, port) => rawRequest(port, postHead(d.path, d.type, d.size, d.authorization), ''),
  },
  {
    name: 'fixed length, gone after part of the body',
    chunked: false,
    open: (d, port) => rawRequest(port, postHead(d.path, d.type, d.size, d.authorization), d.body(d.size / 2)),
  },
  {
    name: 'fixed length, gone before the last byte',
    chunked: false,
    open: (d, port) => rawRequest(port, postHead(d.path, d.type, d.size, d.authorization), d.body(d.size - 1)),
  },
  {
    name: 'chunked, gone after the headers',
    chunked: true,
    open: (d, port) => rawRequest(port, chunkedPostHead(d.path, d.type, d.authorization), ''),
  },
  {
    name: 'chunked, gone in the middle of a chunk',
    chunked: true,
    open: (d, port) =>
      rawRequest(
        port,
        chunkedPostHead(d.path, d.type, d.authorization),
        `${(d.size / 2).toString(16)}\r\n${d.body(d.size / 4)}`,
      ),
  },
  {
    name: 'chunked, gone before the last chunk',
    chunked: true,
    open: (d, port) =>
      rawRequest(
        port,
        chunkedPostHead(d.path, d.type, d.authorization),
        chunk(d.body(d.size / 2)) + chunk(' '.repeat(64)),
      ),
  },
];

t.test('request intake under faulty clients: everything reserved comes back, others are served', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const [ingester, batcher, controller, other] = await Promise.all([
    createTestAccount(infra),
    createTestAccount(infra),
    createTestAccount(infra),
    createTestAccount(infra),
  ]);
  const intakeApi = async (readTimeoutSeconds: number): Promise<Target> => {
    const api = await startApiProcess(
      t,
      config,
      {
        BODY_READ_TIMEOUT_SECONDS: String(readTimeoutSeconds),
        MAX_BUFFERED_REQUEST_BYTES: String(8 * MIB),
        MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: String(MIB),
        SHUTDOWN_DRAIN_SECONDS: '120',
        LOG_LEVEL: 'warn',
      },
      { captureStderr: true },
    );
    // Each token verified once here: from then on a request is charged to its account on arrival. Until its
    // token is verified, a body counts against its address — three unverified 512 KiB bodies from 127.0.0.1 are
    // past that share (CI answered the third 503 when a loaded machine had not yet verified the write tokens).
    for (const a of [ingester, batcher, controller, other])
      for (const auth of [a.auth.read, a.auth.write])
        t.equal((await fetch(`${api.url}/v1/meters`, { headers: auth })).status, 200, 'token verified');
    return { ...api, port: Number(new URL(api.url).port) };
  };
  const [patient, hasty] = await Promise.all([intakeApi(60), intakeApi(2)]);

  const post = async (to: Target, path: string, authorization: string, body: string) => {
    const r = await fetch(`${to.url}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': JSON_TYPE },
      body,
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const meterBody = (name: string) => JSON.stringify({ name, unit: 'u', aggregation: 'sum' });
  const ingestMeter = await post(patient, '/v1/meters', ingester.auth.write.authorization, meterBody('ingested'));
  const otherMeter = await post(patient, '/v1/meters', other.auth.write.authorization, meterBody('served'));
  t.equal(ingestMeter.status, 201);
  t.equal(otherMeter.status, 201);

  const doors: Door[] = [
    {
      name: 'ingest',
      path: `/v1/meters/${ingestMeter.body.id}/usage`,
      authorization: ingester.auth.write.authorization,
      type: JSON_TYPE,
      size: 128 * KIB,
      body: (n) => `[${' '.repeat(n - 1)}`,
    },
    {
      name: 'ingest over meters',
      path: '/v1/usage',
      authorization: batcher.auth.write.authorization,
      type: JSON_TYPE,
      size: 128 * KIB,
      body: (n) => `[${' '.repeat(n - 1)}`,
    },
    {
      name: 'control plane',
      path: '/v1/meters',
      authorization: controller.auth.write.authorization,
      type: JSON_TYPE,
      size: 128 * KIB,
      body: (n) => `{${' '.repeat(n - 1)}`,
    },
    {
      name: 'OAuth token endpoint',
      path: '/oauth/token',
      type: FORM_TYPE,
      size: 8 * KIB,
      body: (n) => `grant_type=${'x'.repeat(n - 11)}`,
    },
    {
      name: 'OAuth sign-in form',
      path: '/oauth/authorize',
      type: FORM_TYPE,
      size: 8 * KIB,
      body: (n) => `email=${'x'.repeat(n - 6)}`,
    },
  ];
  const openAtEveryStage = (to: Target) =>
    Promise.all(doors.flatMap((door) => STAGES.map((stage) => stage.open(door, to.port))));

  /**
   * Another account (from the same address) and another client are answered while the faulty ones hold on,
   * and /readyz tells the truth: in the issue it said 200 while every request with a body got 503.
   */
  const othersServed = async (t: Test, to: Target) => {
    const W = other.auth.write.authorization;
    const ready = await fetch(`${to.url}/readyz`);
    t.equal(ready.status, 200, '/readyz: ready');
    t.equal(((await ready.json()) as { status: string }).status, 'ready');
    t.equal((await post(to, '/v1/meters', W, meterBody(`m ${Math.random()}`))).status, 201, 'a control-plane write');
    const padded = JSON.stringify({ name: `big ${Math.random()}`, unit: 'u', aggregation: 'sum' }).padEnd(200 * KIB);
    t.equal((await post(to, '/v1/meters', W, padded)).status, 201, 'a 200 KiB body');
    const record = JSON.stringify({ value: 1, timestamp: new Date().toISOString() });
    t.equal((await post(to, `/v1/meters/${otherMeter.body.id}/usage`, W, record)).status, 202, 'an ingest');
    const token = await fetchFrom('127.0.0.2', `${to.url}/oauth/token`, {
      method: 'POST',
      headers: new Headers({ 'content-type': FORM_TYPE }),
      body: 'grant_type=client_credentials&client_id=cli_nobody',
    });
    const answer = (await token.json()) as { error?: string };
    t.ok([400, 401].includes(token.status) && typeof answer.error === 'string', 'another client’s OAuth request');
  };
  const atRest = async (t: Test, to: Target, what: string) => {
    let last = await intakeCounters(to.url);
    await waitUntil(
      async () => JSON.stringify((last = await intakeCounters(to.url))) === JSON.stringify(AT_REST),
      `the intake counters at rest (last: ${JSON.stringify(last)})`,
      20_000,
    );
    t.same(last, AT_REST, what);
  };
  const failures = (to: Target, reason: string) =>
    metricSum(to.url, 'meterline_request_body_failures_total', `reason="${reason}"`);
  const statuses = (xs: RawExchange[]) => {
    const n: Record<number, number> = {};
    for (const x of xs) n[rawStatus(x.received())] = (n[rawStatus(x.received())] ?? 0) + 1;
    return n;
  };

  t.test('bodies abandoned at every stage give back what they reserved at once', async (t) => {
    const abortedBefore = await failures(patient, 'request_aborted');
    const open = await openAtEveryStage(patient);
    await waitUntil(
      async () => (await intakeCounters(patient.url)).reading === open.length,
      'the server reading every body',
    );
    const held = await intakeCounters(patient.url);
    const announced = 3 * doors.reduce((n, d) => n + d.size, 0); // the three fixed-length stages
    t.ok(held.reservedBytes >= announced, `the announced lengths reserved (${held.reservedBytes})`);
    t.same(statuses(open), { 0: open.length }, 'none answered: each is within the budget and its share');
    await othersServed(t, patient);
    for (const x of open) x.socket.destroy();
    await atRest(t, patient, 'every byte back, nothing being read, nothing in flight but the scrape');
    t.equal((await failures(patient, 'request_aborted')) - abortedBefore, open.length, 'each counted as aborted');
    await othersServed(t, patient);
  });

  t.test('trickled bodies are answered 408 after BODY_READ_TIMEOUT_SECONDS and released', async (t) => {
    const trickles: { x: RawExchange; drip: string; door: string }[] = [];
    for (const door of doors) {
      const body = door.body(door.size);
      const head = postHead(door.path, door.type, door.size, door.authorization);
      trickles.push({
        x: await rawRequest(hasty.port, head, body.slice(0, 1)),
        drip: body.slice(1, 2),
        door: `${door.name}, fixed length`,
      });
      trickles.push({
        x: await rawRequest(hasty.port, chunkedPostHead(door.path, door.type, door.authorization), chunk(body[0]!)),
        drip: chunk(body.slice(1, 2)),
        door: `${door.name}, chunked`,
      });
    }
    // Steady but too slow for its size (32 KiB/s for 512 KiB): fast enough that uWebSockets.js's own guard
    // (under 16 KiB/s) never cuts it, so only the read deadline ends it.
    const steady: RawExchange[] = [];
    const jsonDoors = doors.filter((d) => d.type === JSON_TYPE);
    for (const door of jsonDoors) {
      const head = postHead(door.path, door.type, 512 * KIB, door.authorization);
      steady.push(await rawRequest(hasty.port, head, door.body(8 * KIB)));
    }
    const drip = setInterval(() => {
      for (const { x, drip } of trickles) if (!x.closed()) x.socket.write(drip);
      for (const x of steady) if (!x.closed()) x.socket.write(' '.repeat(8 * KIB));
    }, 250);
    t.teardown(() => clearInterval(drip));
    await othersServed(t, hasty);
    await waitUntil(
      () => trickles.every(({ x }) => x.closed()) && steady.every((x) => x.closed()),
      'every trickled request answered and closed',
      30_000,
    );
    clearInterval(drip);
    const answered = [...trickles, ...steady.map((x, i) => ({ x, door: `${jsonDoors[i]!.name}, steady at 32 KiB/s` }))];
    for (const { x, door } of answered) {
      const status = rawStatus(x.received());
      t.equal(status, 408, `${door}: 408${status === 408 ? '' : ` (answered ${status}: ${rawBody(x.received())})`}`);
      t.equal(JSON.parse(rawBody(x.received())).code, 'request_timeout', `${door}: request_timeout`);
    }
    await atRest(t, hasty, 'the trickled bodies released');
  });

  t.test('one caller past its share of the budget gets 503 overloaded; everyone else is read', async (t) => {
    // At the same moment: the ingesting account tries to hold 10 MiB in slow bodies — more than the whole
    // budget (8 MiB) — and 127.0.0.1 sixty-six unauthenticated OAuth bodies of 16 KiB. Each caller gets its
    // share (1 MiB), the rest 503 at once, while another account's 200 KiB body is read and served.
    const ingest = doors[0]!;
    const hold = (n: number, head: string, first: string) =>
      Promise.all(Array.from({ length: n }, () => rawRequest(patient.port, head, first)));
    const [heldIngest, heldOauth] = await Promise.all([
      hold(40, postHead(ingest.path, JSON_TYPE, 256 * KIB, ingest.authorization), '['),
      hold(66, postHead('/oauth/token', FORM_TYPE, 16 * KIB), 'g'),
    ]);
    const answered = (xs: RawExchange[]) => xs.filter((x) => rawStatus(x.received()) !== 0).length;
    await waitUntil(
      () => answered(heldIngest) >= 36 && answered(heldOauth) >= 2,
      'the bodies past each share answered',
    );
    await othersServed(t, patient);
    t.same(statuses(heldIngest), { 0: 4, 503: 36 }, 'the account: four bodies being read (its share), 36 refused');
    t.same(statuses(heldOauth), { 0: 64, 503: 2 }, 'the address: 64 bodies being read (its share), 2 refused');
    t.equal((await intakeCounters(patient.url)).reading, 68, 'the bodies within the shares are still read');
    for (const x of [...heldIngest, ...heldOauth].filter((x) => rawStatus(x.received()) === 503)) {
      t.match(x.received(), /\r\nRetry-After: \d+\r\n/i, 'Retry-After');
      const problem = JSON.parse(rawBody(x.received()));
      t.equal(problem.code, 'overloaded');
      t.match(problem.detail, /your share/);
    }
    for (const x of [...heldIngest, ...heldOauth]) x.socket.destroy();
    await atRest(t, patient, 'the held bodies released');
  });

  t.test('half-open WebSockets: another account is served; all released when the clients go', async (t) => {
    const W = ingester.auth.write.authorization;
    const frame = (seq: number) =>
      maskedTextFrame(
        JSON.stringify({
          seq,
          records: [{ id: `ws-${seq}`, meter_id: ingestMeter.body.id, value: 1, timestamp: new Date().toISOString() }],
        }),
      );
    const partial = await rawWebSocket(patient.port, '/v1/usage/stream', W);
    partial.socket.write(maskedTextFrame('{"seq":1,"records":[', 64 * KIB)); // announces 64 KiB, sends 20 bytes
    const halfClosed = await rawWebSocket(patient.port, '/v1/usage/stream', W);
    halfClosed.socket.end(Buffer.concat([frame(1), frame(2)])); // frames, then FIN: it sends nothing more
    const deaf = await rawWebSocket(patient.port, '/v1/usage/stream', W);
    deaf.socket.pause(); // never reads its answers
    for (let seq = 1; seq <= 200; seq++) deaf.socket.write(frame(seq));
    await waitUntil(
      async () => (await intakeCounters(patient.url)).streamSockets >= 2,
      'the server holding the half-open sockets',
    );
    await othersServed(t, patient);
    for (const x of [partial, halfClosed, deaf]) x.socket.destroy();
    await atRest(t, patient, 'every socket gone, no frame queued or in flight, no byte reserved');
  });

  t.test('frames count against the account’s share too: past it a frame is answered overloaded', async (t) => {
    const ingest = doors[0]!;
    const stream = await StreamClient.open(patient.url, ingest.authorization);
    t.teardown(() => stream.close());
    const frame = (seq: number) =>
      JSON.stringify({
        seq,
        records: [{ id: `big-${seq}`, meter_id: ingestMeter.body.id, value: 1, timestamp: new Date().toISOString() }],
      }).padEnd(400 * KIB);
    // The account already holds 768 KiB of its 1 MiB share in slow bodies: a 400 KiB frame does not fit.
    const held = await Promise.all(
      [1, 2, 3].map(() =>
        rawRequest(patient.port, postHead(ingest.path, JSON_TYPE, 256 * KIB, ingest.authorization), '['),
      ),
    );
    await waitUntil(async () => (await intakeCounters(patient.url)).reservedBytes >= 768 * KIB, 'the bodies reserved');
    stream.send(frame(1));
    await stream.waitForAnswers(1);
    const refused = stream.answersTo(1)[0]?.error as { code: string; retry_after?: number } | undefined;
    t.equal(refused?.code, 'overloaded', 'over the share: refused, not recorded');
    t.equal(refused?.retry_after, 1, 'with when to retry');
    for (const x of held) x.socket.destroy();
    await waitUntil(async () => (await intakeCounters(patient.url)).reservedBytes === 0, 'the bodies released');
    stream.send(frame(2));
    await stream.waitForAnswers(2);
    t.equal(stream.answersTo(2)[0]?.accepted, 1, 'with the share free again, the same frame is taken');
    stream.close();
    await atRest(t, patient, 'the frames’ bytes released');
    t.comment(`intake counters after the harness: ${JSON.stringify(await intakeCounters(patient.url))}`);
  });

  t.test('SIGTERM while faulty clients hold bodies: the drain ends as soon as they are gone', async (t) => {
    const partial = await rawWebSocket(patient.port, '/v1/usage/stream', ingester.auth.write.authorization);
    partial.socket.write(maskedTextFrame('{"seq":1', 64 * KIB));
    const abandoned = await openAtEveryStage(patient);
    await waitUntil(
      async () => (await intakeCounters(patient.url)).reading === abandoned.length,
      'every body being read',
    );
    let exitCode: number | null | undefined;
    patient.child.once('exit', (code) => (exitCode = code));
    patient.child.kill('SIGTERM');
    // The drain has begun (no new connections) with every body in flight; then their clients go, mid-body.
    // Their read deadline is a minute away and the drain's two: only their going can end the drain now.
    await waitUntil(() => refusesConnections(patient.port), 'the listener closed');
    t.same(statuses(abandoned), { 0: abandoned.length }, 'the bodies were still arriving when the drain began');
    for (const x of abandoned) x.socket.destroy();
    await waitUntil(() => exitCode !== undefined, 'the api to exit, long before any deadline', 30_000);
    t.equal(exitCode, 0, 'a clean exit');
    t.notMatch(patient.stderr(), /still in flight after the drain deadline/, 'nothing was waited for in vain');
    partial.socket.destroy();
  });
});

interface Target extends ApiProcess {
  port: number;
}
