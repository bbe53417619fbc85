/**
 * `webhooks` phase (issue 9, docs/design.md §11: ≥ 5,000 signed deliveries/s, event → first attempt p99 ≤ 1 s).
 *
 * A local HTTP receiver (in this process, answering 204 at once) and 100 webhooks of the bench account, all
 * subscribed to `invoice.paid`; the real dispatcher role runs as its own process(es). Three measurements:
 * 1. burst    — `burstEvents` events committed to the outbox in one transaction (× 100 webhooks): signed
 *               deliveries/s from the commit to the last first attempt, and event → first attempt p50/p99
 *               (a burst queues, so its tail is the drain time);
 * 2. steady   — events at a fixed rate below capacity for a few seconds: event → first attempt p50/p99;
 * 3. steady + a hanging receiver — the same with a 101st webhook that never answers (each request times
 *               out at 10 s): the others' latency shows what the per-webhook concurrency limit protects.
 * Latency = receipt time − the event's created_at (its commit, same machine clock).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import pg from 'pg';
import type { BenchWorld } from '../world.js';
import { repoPath } from '../../shared/paths.js';
import { newId } from '../../shared/ids.js';
import { insertWebhook } from '../../services/domain/webhooks/store.js';
import { sealWebhookSecret, webhookSecretKey } from '../../services/domain/webhooks/secret.js';

export interface LatencyFigures {
  deliveries: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export interface WebhooksResult {
  webhooks: number;
  dispatcher_procs: number;
  /** dispatcher_cpu_ms_per_1000: CPU the dispatcher processes spent per 1,000 deliveries (stable under a noisy machine). */
  burst: LatencyFigures & {
    events: number;
    seconds: number;
    deliveries_per_s: number;
    dispatcher_cpu_ms_per_1000: number;
    /** Every process of the stack's Postgres (its backends, WAL writer, checkpointer) per 1,000 deliveries. */
    postgres_cpu_ms_per_1000: number;
    receiver_cpu_ms_per_1000: number;
  };
  steady: LatencyFigures & { events_per_s: number; deliveries_per_s: number };
  steady_with_hanging_receiver: LatencyFigures & { events_per_s: number; hanging_requests: number };
  /** Requests a webhook received a second time for one event over the whole phase (exactly once: 0). */
  duplicates: number;
}

export interface WebhooksPhaseDeps {
  world: BenchWorld;
  log: (m: string) => void;
  /** Starts a role process and resolves once it is ready (bench/run.ts's launcher). */
  launch: (name: string, args: string[], env: Record<string, string>) => Promise<{ child: { pid?: number } }>;
  /** Write a V8 CPU profile of each dispatcher process to this directory. */
  profileDir?: string;
  dispatcherProcs: number;
  burstEvents: number;
  steadyEventsPerS: number;
  steadySeconds: number;
}

const WEBHOOKS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Receiver {
  /** Receipt − created_at per (event, path) first receipt, by event id. */
  private readonly first = new Map<string, number>();
  latencies: number[] = [];
  /** Second receipts of an (event, webhook): not counted in latencies. */
  duplicates = 0;
  lastReceiptMs = 0;
  hanging = 0;
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (req.url === '/hang') {
        this.hanging++;
        req.resume();
        return; // never answers: the dispatcher gives up after 10 s
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = Date.now();
        const key = `${req.url} ${req.headers['x-webhook-id']}`;
        if (!this.first.has(key)) {
          const created = Date.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')).created_at);
          this.first.set(key, now);
          this.latencies.push(now - created);
          this.lastReceiptMs = now;
        } else this.duplicates++;
        res.writeHead(204).end();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  reset(): void {
    this.latencies = [];
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** CPU milliseconds (user + system) a process has used, from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in 1/100 s
}

/** CPU milliseconds of the Postgres server: the postmaster (its data directory's postmaster.pid) and its children. */
async function postgresCpuMs(pool: pg.Pool): Promise<() => number> {
  const dir = (await pool.query<{ d: string }>('SELECT current_setting($1) AS d', ['data_directory'])).rows[0]!.d;
  const postmaster = Number(readFileSync(`${dir}/postmaster.pid`, 'utf8').split('\n')[0]);
  return () => {
    let ms = cpuMs(postmaster);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (Number(stat.split(') ')[1]!.split(' ')[1]) === postmaster) ms += cpuMs(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
    return ms;
  };
}

function figures(latencies: number[]): LatencyFigures {
  const s = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { deliveries: s.length, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: s[s.length - 1] ?? NaN };
}

async function emitEvents(pool: pg.Pool, accountId: string, n: number): Promise<Date> {
  const ids = Array.from({ length: n }, () => newId('evt'));
  const data = ids.map((_, i) => JSON.stringify({ invoice_id: `inv_bench_${i}`, amount: 10, currency: 'USD' }));
  const r = await pool.query<{ now: Date }>(
    `WITH ins AS (INSERT INTO outbox_events (id, account_id, type, data) SELECT i, $2, 'invoice.paid', d::jsonb FROM unnest($1::text[], $3::text[]) AS x(i, d))
     SELECT now()`,
    [ids, accountId, data],
  );
  return r.rows[0]!.now;
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

/** Emits `perS` events a second for `seconds`, in 10 ticks a second; returns how many. */
async function steady(pool: pg.Pool, accountId: string, perS: number, seconds: number): Promise<number> {
  const perTick = Math.max(1, Math.round(perS / 10));
  const ticks = seconds * 10;
  const start = Date.now();
  for (let i = 0; i < ticks; i++) {
    await emitEvents(pool, accountId, perTick);
    const wait = start + (i + 1) * 100 - Date.now();
    if (wait > 0) await sleep(wait);
  }
  return perTick * ticks;
}

export async function runWebhooksPhase(d: WebhooksPhaseDeps): Promise<WebhooksResult> {
  const { world, log } = d;
  const receiver = new Receiver();
  await receiver.start();
  const pool = new pg.Pool({ connectionString: world.config.DATABASE_URL, max: 4 });
  try {
    const key = webhookSecretKey(world.config.SECRET_KEY);
    for (let i = 0; i < WEBHOOKS; i++) {
      await insertWebhook(pool, world.accountId, {
        url: `http://127.0.0.1:${receiver.port}/h${i}`,
        events: ['invoice.paid'],
        secretSealed: sealWebhookSecret(key, `whsec_bench_secret_${i}_0123456789`),
      });
    }
    const pids: number[] = [];
    for (let i = 0; i < d.dispatcherProcs; i++) {
      const profile = d.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${d.profileDir}`] : [];
      const p = await d.launch(`dispatcher-${i}`, [...profile, repoPath('dist/services/main.js'), 'dispatcher'], {
        ...world.env,
        WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      });
      pids.push(p.child.pid!);
    }
    const dispatcherCpu = () => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
    const postgresCpu = await postgresCpuMs(pool);
    // Warm-up: sockets, the signature worker thread, prepared plans.
    await emitEvents(pool, world.accountId, 20);
    await waitFor(() => receiver.latencies.length >= 20 * WEBHOOKS, 60_000);
    receiver.reset();

    const total = d.burstEvents * WEBHOOKS;
    log(`webhooks: burst of ${d.burstEvents} events × ${WEBHOOKS} webhooks`);
    const cpuBefore = { dispatcher: dispatcherCpu(), postgres: postgresCpu(), receiver: process.cpuUsage() };
    const committed = await emitEvents(pool, world.accountId, d.burstEvents);
    if (!(await waitFor(() => receiver.latencies.length >= total, 10 * 60_000)))
      log(`webhooks: burst incomplete (${receiver.latencies.length} of ${total})`);
    const seconds = (receiver.lastReceiptMs - committed.getTime()) / 1000;
    const receiverCpu = process.cpuUsage(cpuBefore.receiver);
    const per1000 = (ms: number) => Math.round((ms / receiver.latencies.length) * 1000);
    const burst = {
      ...figures(receiver.latencies),
      events: d.burstEvents,
      seconds: Math.round(seconds * 100) / 100,
      deliveries_per_s: Math.round(receiver.latencies.length / seconds),
      dispatcher_cpu_ms_per_1000: per1000(dispatcherCpu() - cpuBefore.dispatcher),
      postgres_cpu_ms_per_1000: per1000(postgresCpu() - cpuBefore.postgres),
      receiver_cpu_ms_per_1000: per1000((receiverCpu.user + receiverCpu.system) / 1000),
    };
    log(`webhooks burst: ${JSON.stringify(burst)}`);

    receiver.reset();
    const n = await steady(pool, world.accountId, d.steadyEventsPerS, d.steadySeconds);
    await waitFor(() => receiver.latencies.length >= n * WEBHOOKS, 120_000);
    const steadyFigures = {
      ...figures(receiver.latencies),
      events_per_s: d.steadyEventsPerS,
      deliveries_per_s: d.steadyEventsPerS * WEBHOOKS,
    };
    log(`webhooks steady: ${JSON.stringify(steadyFigures)}`);

    await insertWebhook(pool, world.accountId, {
      url: `http://127.0.0.1:${receiver.port}/hang`,
      events: ['invoice.paid'],
      secretSealed: sealWebhookSecret(key, 'whsec_bench_hanging_0123456789'),
    });
    receiver.reset();
    const n2 = await steady(pool, world.accountId, d.steadyEventsPerS, d.steadySeconds);
    await waitFor(() => receiver.latencies.length >= n2 * WEBHOOKS, 120_000);
    const withHanging = {
      ...figures(receiver.latencies),
      events_per_s: d.steadyEventsPerS,
      hanging_requests: receiver.hanging,
    };
    log(`webhooks steady with a hanging receiver: ${JSON.stringify(withHanging)}`);
    log(`webhooks: ${receiver.duplicates} duplicate deliveries over the phase (exactly once: 0)`);
    // The hanging webhook's backlog is not the bench's business: stop delivering to it.
    await pool.query("UPDATE webhooks SET status = 'disabled' WHERE url LIKE '%/hang'");
    return {
      webhooks: WEBHOOKS,
      dispatcher_procs: d.dispatcherProcs,
      burst,
      steady: steadyFigures,
      steady_with_hanging_receiver: withHanging,
      duplicates: receiver.duplicates,
    };
  } finally {
    await pool.end();
    await receiver.stop();
  }
}

/** The goals of docs/design.md §11 for webhooks: the burst's rate, the steady first-attempt p99, exactly once. */
export function webhooksGoals(w: WebhooksResult) {
  const procs = `${w.dispatcher_procs} dispatcher${w.dispatcher_procs === 1 ? '' : 's'}`;
  return [
    {
      goal: 'webhook burst ≥ 5,000 deliveries/s',
      tool: procs,
      measured: `${w.burst.deliveries_per_s.toLocaleString('en-US')}/s`,
      met: w.burst.deliveries_per_s >= 5_000,
    },
    {
      goal: 'webhook event → first attempt p99 ≤ 1 s (steady)',
      tool: `${w.steady.deliveries_per_s.toLocaleString('en-US')}/s`,
      measured: `${w.steady.p99_ms} ms; ${w.steady_with_hanging_receiver.p99_ms} ms with a hanging webhook`,
      met: w.steady.p99_ms <= 1_000 && w.steady_with_hanging_receiver.p99_ms <= 1_000,
    },
    {
      goal: 'webhook deliveries exactly once per endpoint',
      tool: '—',
      measured: `${w.duplicates} duplicates`,
      met: w.duplicates === 0,
    },
  ];
}
