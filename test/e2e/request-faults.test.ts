import t from 'tap';
import type { Test } from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApiProcess } from '../fixtures/api-process.js';
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
  type RawExchange,
} from '../fixtures/raw-http.js';

/**
 * The fault harness of issue 24: clients that announce a body and never finish it — gone after the headers,
 * after part of the body, before its last byte or last chunk; fixed length and chunked — clients that
 * trickle, one caller holding more than its share, WebSockets left half-open. Against the ingest route, the
 * control plane and the OAuth token endpoint (read before any authentication) of an api process, each time:
 * the intake counters in /metrics return to rest (no byte reserved, no body being read, only the scrape in
 * flight), another account and another client are served meanwhile, and at the end a SIGTERM drain finishes
 * at once (SHUTDOWN_DRAIN_SECONDS is 120: a wedged request would hold the process that long).
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
  const [ingester, controller, other] = await Promise.all([
    createTestAccount(infra),
    createTestAccount(infra),
    createTestAccount(infra),
  ]);
  const api = await startApiProcess(
    t,
    config,
    {
      BODY_READ_TIMEOUT_SECONDS: '2',
      MAX_BUFFERED_REQUEST_BYTES: String(8 * MIB),
      MAX_BUFFERED_REQUEST_BYTES_PER_CALLER: String(MIB),
      SHUTDOWN_DRAIN_SECONDS: '120',
      LOG_LEVEL: 'warn',
    },
    { captureStderr: true },
  );
  const port = Number(new URL(api.url).port);
  const post = async (path: string, authorization: string, body: string) => {
    const r = await fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: { authorization, 'content-type': JSON_TYPE },
      body,
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  const meterBody = (name: string) => JSON.stringify({ name, unit: 'u', aggregation: 'sum' });
  const ingestMeter = await post('/v1/meters', ingester.auth.write.authorization, meterBody('ingested'));
  const otherMeter = await post('/v1/meters', other.auth.write.authorization, meterBody('served'));
  t.equal(ingestMeter.status, 201);
  t.equal(otherMeter.status, 201);
  // Each token verified once: from here on a request is charged to its account at once.
  t.equal((await post('/v1/meters', controller.auth.write.authorization, meterBody('first'))).status, 201);

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
  ];

  /** Another account (from the same address) and another client are answered while the faulty ones hold on. */
  const othersServed = async (t: Test) => {
    const W = other.auth.write.authorization;
    t.equal((await post('/v1/meters', W, meterBody(`m ${Math.random()}`))).status, 201, 'a control-plane write');
    const padded = JSON.stringify({ name: `big ${Math.random()}`, unit: 'u', aggregation: 'sum' }).padEnd(200 * KIB);
    t.equal((await post('/v1/meters', W, padded)).status, 201, 'a 200 KiB body');
    const record = JSON.stringify({ value: 1, timestamp: new Date().toISOString() });
    t.equal((await post(`/v1/meters/${otherMeter.body.id}/usage`, W, record)).status, 202, 'an ingest');
    const token = await fetchFrom('127.0.0.2', `${api.url}/oauth/token`, {
      method: 'POST',
      headers: new Headers({ 'content-type': FORM_TYPE }),
      body: 'grant_type=client_credentials&client_id=cli_nobody',
    });
    const answer = (await token.json()) as { error?: string };
    t.ok([400, 401].includes(token.status) && typeof answer.error === 'string', 'another client’s OAuth request');
  };
  const atRest = async (what: string) => {
    let last = await intakeCounters(api.url);
    await waitUntil(
      async () => JSON.stringify((last = await intakeCounters(api.url))) === JSON.stringify(AT_REST),
      `the intake counters at rest (last: ${JSON.stringify(last)})`,
      20_000,
    );
    t.same(last, AT_REST, what);
  };
  const failures = (reason: string) =>
    metricSum(api.url, 'meterline_request_body_failures_total', `reason="${reason}"`);

  t.test('bodies abandoned at every stage give back what they reserved at once', async (t) => {
    const abortedBefore = await failures('request_aborted');
    const open: RawExchange[] = [];
    for (const door of doors) for (const stage of STAGES) open.push(await stage.open(door, port));
    await waitUntil(
      async () => (await intakeCounters(api.url)).reading === open.length,
      'the server reading every body',
    );
    const held = await intakeCounters(api.url);
    t.ok(
      held.reservedBytes >= 3 * (128 * KIB + 128 * KIB + 8 * KIB),
      `the announced lengths reserved (${held.reservedBytes})`,
    );
    t.ok(
      open.every((x) => rawStatus(x.received()) === 0),
      'none answered yet: each is within the budget and its share',
    );
    await othersServed(t);
    for (const x of open) x.socket.destroy();
    await atRest('every byte back, nothing being read, nothing in flight but the scrape');
    t.equal((await failures('request_aborted')) - abortedBefore, open.length, 'each counted as aborted');
    await othersServed(t);
  });

  t.test('trickled bodies are answered 408 after BODY_READ_TIMEOUT_SECONDS and released', async (t) => {
    const trickles: { x: RawExchange; drip: string; door: string }[] = [];
    for (const door of doors) {
      const body = door.body(door.size);
      trickles.push({
        x: await rawRequest(port, postHead(door.path, door.type, door.size, door.authorization), body.slice(0, 1)),
        drip: body.slice(1, 2),
        door: `${door.name}, fixed length`,
      });
      trickles.push({
        x: await rawRequest(port, chunkedPostHead(door.path, door.type, door.authorization), chunk(body.slice(0, 1))),
        drip: chunk(body.slice(1, 2)),
        door: `${door.name}, chunked`,
      });
    }
    // Steady but too slow for its size (32 KiB/s for 512 KiB): fast enough that uWebSockets.js's own guard
    // (under 16 KiB/s) never cuts it, so only the read deadline ends it.
    const steady: RawExchange[] = [];
    for (const door of doors.slice(0, 2))
      steady.push(
        await rawRequest(port, postHead(door.path, door.type, 512 * KIB, door.authorization), door.body(8 * KIB)),
      );
    const drip = setInterval(() => {
      for (const { x, drip } of trickles) if (!x.closed()) x.socket.write(drip);
      for (const x of steady) if (!x.closed()) x.socket.write(' '.repeat(8 * KIB));
    }, 250);
    t.teardown(() => clearInterval(drip));
    await othersServed(t);
    await waitUntil(
      () => trickles.every(({ x }) => x.closed()) && steady.every((x) => x.closed()),
      'every trickled request answered and closed',
      30_000,
    );
    clearInterval(drip);
    const answered = [...trickles, ...steady.map((x, i) => ({ x, door: `${doors[i]!.name}, steady at 32 KiB/s` }))];
    for (const { x, door } of answered) {
      t.equal(rawStatus(x.received()), 408, `${door}: 408`);
      t.equal(JSON.parse(rawBody(x.received())).code, 'request_timeout', `${door}: request_timeout`);
    }
    await atRest('the trickled bodies released');
  });

  t.test('one caller past its share of the budget gets 503 overloaded; everyone else is read', async (t) => {
    // A share of 1 MiB: four 256 KiB bodies of the ingesting account; 64 OAuth bodies of 16 KiB from 127.0.0.1.
    const ingest = doors[0]!;
    const heldIngest: RawExchange[] = [];
    for (let i = 0; i < 6; i++)
      heldIngest.push(await rawRequest(port, postHead(ingest.path, JSON_TYPE, 256 * KIB, ingest.authorization), '['));
    const heldOauth: RawExchange[] = [];
    for (let i = 0; i < 66; i++)
      heldOauth.push(await rawRequest(port, postHead('/oauth/token', FORM_TYPE, 16 * KIB), 'g'));
    const refused = (xs: RawExchange[]) => xs.filter((x) => x.closed());
    await waitUntil(
      () => refused(heldIngest).length === 2 && refused(heldOauth).length === 2,
      'the bodies past each share answered',
    );
    for (const x of [...refused(heldIngest), ...refused(heldOauth)]) {
      t.equal(rawStatus(x.received()), 503);
      t.match(x.received(), /\r\nRetry-After: \d+\r\n/i, 'Retry-After');
      const problem = JSON.parse(rawBody(x.received()));
      t.equal(problem.code, 'overloaded');
      t.match(problem.detail, /your share/);
    }
    t.equal(heldIngest.filter((x) => !x.closed()).length, 4, 'the account’s first four bodies are still being read');
    await othersServed(t);
    for (const x of [...heldIngest, ...heldOauth]) x.socket.destroy();
    await atRest('the held bodies released');
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
    const partial = await rawWebSocket(port, '/v1/usage/stream', W);
    partial.socket.write(maskedTextFrame('{"seq":1,"records":[', 64 * KIB)); // announces 64 KiB, sends 20 bytes
    const halfClosed = await rawWebSocket(port, '/v1/usage/stream', W);
    halfClosed.socket.end(Buffer.concat([frame(1), frame(2)])); // frames, then FIN: it sends nothing more
    const deaf = await rawWebSocket(port, '/v1/usage/stream', W);
    deaf.socket.pause(); // never reads its answers
    for (let seq = 1; seq <= 200; seq++) deaf.socket.write(frame(seq));
    await waitUntil(
      async () => (await intakeCounters(api.url)).streamSockets >= 2,
      'the server holding the half-open sockets',
    );
    await othersServed(t);
    for (const x of [partial, halfClosed, deaf]) x.socket.destroy();
    await atRest('every socket gone, no frame queued or in flight, no byte reserved');
  });

  t.test('frames count against the account’s share too: past it a frame is answered overloaded', async (t) => {
    const ingest = doors[0]!;
    const stream = await StreamClient.open(api.url, ingest.authorization);
    t.teardown(() => stream.close());
    const frame = (seq: number) =>
      JSON.stringify({
        seq,
        records: [{ id: `big-${seq}`, meter_id: ingestMeter.body.id, value: 1, timestamp: new Date().toISOString() }],
      }).padEnd(400 * KIB);
    // The account already holds 768 KiB of its 1 MiB share in slow bodies: a 400 KiB frame does not fit.
    const held: RawExchange[] = [];
    for (let i = 0; i < 3; i++)
      held.push(await rawRequest(port, postHead(ingest.path, JSON_TYPE, 256 * KIB, ingest.authorization), '['));
    await waitUntil(async () => (await intakeCounters(api.url)).reservedBytes >= 768 * KIB, 'the bodies reserved');
    stream.send(frame(1));
    await stream.waitForAnswers(1);
    const refused = stream.answersTo(1)[0]?.error as { code: string; retry_after?: number } | undefined;
    t.equal(refused?.code, 'overloaded', 'over the share: refused, not recorded');
    t.equal(refused?.retry_after, 1, 'with when to retry');
    for (const x of held) x.socket.destroy();
    await waitUntil(async () => (await intakeCounters(api.url)).reservedBytes === 0, 'the bodies released');
    stream.send(frame(2));
    await stream.waitForAnswers(2);
    t.equal(stream.answersTo(2)[0]?.accepted, 1, 'with the share free again, the same frame is taken');
    stream.close();
    await atRest('the frames’ bytes released');
  });

  t.test('SIGTERM with faulty clients connected: the drain finishes at once', async (t) => {
    const W = ingester.auth.write.authorization;
    const partial = await rawWebSocket(port, '/v1/usage/stream', W);
    partial.socket.write(maskedTextFrame('{"seq":1', 64 * KIB));
    const aborted: RawExchange[] = [];
    for (const door of doors) for (const stage of STAGES) aborted.push(await stage.open(door, port));
    await waitUntil(async () => (await intakeCounters(api.url)).reading === aborted.length, 'every body being read');
    for (const x of aborted) x.socket.destroy();
    await waitUntil(async () => (await intakeCounters(api.url)).reading === 0, 'the aborted bodies released');
    let exitCode: number | null | undefined;
    api.child.once('exit', (code) => (exitCode = code));
    api.child.kill('SIGTERM');
    await waitUntil(() => exitCode !== undefined, 'the api to exit, long before its 120 s drain deadline', 30_000);
    t.equal(exitCode, 0, 'a clean exit');
    t.notMatch(api.stderr(), /still in flight after the drain deadline/, 'nothing was left waiting at the deadline');
    partial.socket.destroy();
  });
});
