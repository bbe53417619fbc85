/**
 * The security review's reproduction of issue 24 against a running api (`npm start`, or one api process):
 * SOCKETS raw connections announce 1 MiB JSON bodies on the ingest route with account A's token, send a byte
 * every TRICKLE_INTERVAL_SECONDS for HOLD_SECONDS, then close without finishing. While they are held and after
 * they closed, every kind of body request is tried — account B's control-plane write, account B's ingest, the
 * unauthenticated OAuth token endpoint — and the statuses are counted, with the body budget counters of /metrics.
 *
 *   node dist/bench/body-faults.js --base http://127.0.0.1:8080 --token-a "$TOKEN_A" --token-b "$TOKEN_B" \
 *     [--sockets 300] [--hold 12] [--interval 5] [--probes 20]
 *
 * Prints one JSON document: the statuses while the sockets were held and after they closed, and the counters.
 */
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: 'http://127.0.0.1:8080' },
    'token-a': { type: 'string' },
    'token-b': { type: 'string' },
    sockets: { type: 'string', default: '300' },
    hold: { type: 'string', default: '12' },
    interval: { type: 'string', default: '5' },
    probes: { type: 'string', default: '20' },
  },
});
const base = new URL(values.base!);
const tokenA: string = values['token-a'] ?? '';
const tokenB: string = values['token-b'] ?? '';
if (!tokenA || !tokenB) throw new Error('--token-a and --token-b are required (two accounts, scope write)');
const SOCKETS = Number(values.sockets);
const HOLD_MS = Number(values.hold) * 1000;
const INTERVAL_MS = Number(values.interval) * 1000;
const PROBES = Number(values.probes);
const MIB = 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A socket that announced a 1 MiB body and sent `[`; what the server answered and whether it closed. */
function holdBody(
  path: string,
  token: string,
): Promise<{ socket: Socket; answer: () => string; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(base.port), base.hostname);
    let answer = '';
    let closedByServer = false;
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('end', () => (closedByServer = true));
    socket.on('error', () => (closedByServer = true));
    socket.once('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Length: ${MIB}\r\n\r\n[`,
      );
      resolve({ socket, answer: () => answer, closed: () => closedByServer });
    });
    socket.once('error', reject);
  });
}

async function post(path: string, body: string, headers: Record<string, string>): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await fetch(new URL(path, base), { method: 'POST', headers, body });
      await r.arrayBuffer();
      return r.status;
    } catch (err) {
      if (attempt === 0 && (err as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET') continue;
      return 0;
    }
  }
}

/** Statuses of PROBES requests of each kind. */
async function probe(meterId: string): Promise<Record<string, Record<string, number>>> {
  const kinds: Record<string, () => Promise<number>> = {
    'control plane write (account B)': () =>
      post('/v1/meters', JSON.stringify({ name: `probe ${Math.random()}`, unit: 'u', aggregation: 'sum' }), {
        authorization: `Bearer ${tokenB}`,
        'content-type': 'application/json',
      }),
    'ingest (account B)': () =>
      post(`/v1/meters/${meterId}/usage`, JSON.stringify({ value: 1, timestamp: new Date().toISOString() }), {
        authorization: `Bearer ${tokenB}`,
        'content-type': 'application/json',
      }),
    'POST /oauth/token (no auth)': () =>
      post('/oauth/token', 'grant_type=client_credentials', { 'content-type': 'application/x-www-form-urlencoded' }),
  };
  const out: Record<string, Record<string, number>> = {};
  for (const [kind, call] of Object.entries(kinds)) {
    const counts: Record<string, number> = {};
    for (let i = 0; i < PROBES; i++) {
      const s = String(await call());
      counts[s] = (counts[s] ?? 0) + 1;
    }
    out[kind] = counts;
  }
  return out;
}

/** The intake counters of /metrics, one entry per sample (`name{labels}`). */
async function budgetCounters(): Promise<Record<string, number>> {
  const text = await fetch(new URL('/metrics', base)).then((r) => r.text());
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(meterline_(?:request_bod\w*|http_requests_in_flight)(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m)
      out[
        m[1]!
          .replace(/,?role="[^"]*"/, '')
          .replace(/,}/, '}')
          .replace('{}', '')
      ] = Number(m[2]);
  }
  return out;
}

async function main(): Promise<void> {
  const meter = await fetch(new URL('/v1/meters', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenB}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `body-faults ${Date.now()}`, unit: 'u', aggregation: 'sum' }),
  });
  if (meter.status !== 201) throw new Error(`creating account B's meter: ${meter.status} ${await meter.text()}`);
  const meterId = ((await meter.json()) as { id: string }).id;
  const before = await probe(meterId);

  const held = [];
  for (let i = 0; i < SOCKETS; i++) held.push(await holdBody(`/v1/meters/${meterId}/usage`, tokenA));
  const started = Date.now();
  await sleep(1_000);
  const countersAfterOpening = await budgetCounters();
  const whileHeld = await probe(meterId); // account A's slow bodies must not starve account B nor the OAuth client
  while (Date.now() - started < HOLD_MS) {
    await sleep(Math.min(INTERVAL_MS, HOLD_MS - (Date.now() - started)));
    for (const h of held) if (!h.socket.destroyed) h.socket.write(' ');
  }
  const answeredWhileHeld: Record<string, number> = {};
  for (const h of held) {
    const s = /^HTTP\/1\.1 (\d{3})/.exec(h.answer())?.[1] ?? (h.closed() ? 'closed unanswered' : 'open, unanswered');
    answeredWhileHeld[s] = (answeredWhileHeld[s] ?? 0) + 1;
  }
  const countersWhileHeld = await budgetCounters();
  for (const h of held) h.socket.destroy();
  await sleep(1_000);
  const after = await probe(meterId);
  const countersAfter = await budgetCounters();
  const [load1] = loadavg();
  process.stdout.write(
    `${JSON.stringify(
      {
        sockets: SOCKETS,
        hold_seconds: HOLD_MS / 1000,
        load_average_1m: Number(load1!.toFixed(2)),
        probes_before: before,
        counters_1s_after_opening: countersAfterOpening,
        probes_while_held: whileHeld,
        held_sockets_answered_while_held: answeredWhileHeld,
        counters_while_held: countersWhileHeld,
        probes_after_close: after,
        counters_after_close: countersAfter,
      },
      null,
      2,
    )}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
