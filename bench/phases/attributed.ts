/**
 * Operator mode in the benchmark (issue 26), phase `attributed`:
 * - set-up: an operator (admin token), a deployment meter and --attributed-customers (10,000) customers — rows
 *   written straight into Postgres and their registry shards into NATS KV, as the Customers API would leave them;
 * - the load: batched records to the deployment meter, each record naming its customer (`customer`), bodies
 *   cycling through every customer — run by bench/run.ts's `phase()` beside `batched` (unattributed), so the
 *   two CPU-per-record figures come from the same run;
 * - the registry at scale: --registry-customers (1,000,000) customers in the bucket, then the memory one
 *   registry holds per customer (a process of its own, bench/registry-memory.ts) and how long an api process
 *   takes from spawn to listening with them.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kvm, type KV } from '@nats-io/kv';
import { connectNats, NatsNames } from '../../shared/clients/nats.js';
import { createAccount } from '../../services/domain/accounts/store.js';
import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { issueAccessToken } from '../../shared/auth/access-tokens.js';
import { newId } from '../../shared/ids.js';
import { encodeShard, shardKey, type CustomerEntry } from '../../shared/customers/shards.js';
import { repoPath } from '../../shared/paths.js';
import { benchPort as freePort } from '../ports.js';
import type { BenchWorld } from '../world.js';

export interface AttributedSetup {
  adminToken: string;
  meterId: string;
  customers: number;
  /** Request bodies: `batch` records each, every record naming its own customer; all of them cover every customer. */
  bodies: string[];
}

export interface RegistryScale {
  customers: number;
  /** Heap + array buffers one CustomerRegistry holds per customer, after GC (bench/registry-memory.ts). */
  bytes_per_customer: number;
  registry_load_s: number;
  /** spawn → listening of an api process, with the registry at `customers` and at the phase's 10,000. */
  api_start_s: number;
  api_start_s_small: number;
  api_rss_mb: number;
}

export interface AttributedResult {
  customers: number;
  /** Per tool: pipeline CPU per record of `attributed` ÷ `batched` (goal ≤ 1.1). */
  cpu_ratio: Record<string, number>;
  count_check?: { accepted: number; stored: number; exact: boolean };
  registry?: RegistryScale;
}

const externalId = (i: number) => `bench-customer-${String(i).padStart(7, '0')}`;

/** Every account's shard entry written from Postgres at once (a bulk load: no writer runs meanwhile). */
async function writeAllShards(pool: pg.Pool, kv: KV): Promise<number> {
  const { rows } = await pool.query<{ id: string; customer_id: string; external_id: string | null; s: number }>(
    'SELECT id, customer_id, external_id, customer_registry_shard(id) AS s FROM accounts',
  );
  const byShard = new Map<number, CustomerEntry[]>();
  for (const r of rows) {
    const list = byShard.get(r.s) ?? [];
    list.push({ accountId: r.id, customerId: r.customer_id, externalId: r.external_id });
    byShard.set(r.s, list);
  }
  const shards = [...byShard];
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < shards.length) {
        const [shard, entries] = shards[next++]!;
        await kv.put(shardKey(shard), encodeShard(entries));
      }
    }),
  );
  return rows.length;
}

/** `n` customers as rows of `accounts` (what POST /v1/customers inserts), in chunks. */
async function insertCustomers(pool: pg.Pool, from: number, n: number): Promise<void> {
  for (let i = 0; i < n; i += 20_000) {
    const count = Math.min(20_000, n - i);
    const ids = Array.from({ length: count }, () => newId('acct'));
    const cus = Array.from({ length: count }, () => newId('cus'));
    const ext = Array.from({ length: count }, (_, k) => externalId(from + i + k));
    await pool.query(
      `INSERT INTO accounts (id, customer_id, name, external_id)
       SELECT a, c, 'Bench customer', e FROM unnest($1::text[], $2::text[], $3::text[]) AS x(a, c, e)`,
      [ids, cus, ext],
    );
  }
}

export async function prepareAttributed(
  world: BenchWorld,
  apiUrl: string,
  opts: { customers: number; batch: number; timestamp: string },
): Promise<AttributedSetup> {
  const pool = new pg.Pool({ connectionString: world.config.DATABASE_URL, max: 2 });
  const nc = await connectNats(world.config.NATS_URL, 'bench-attributed');
  try {
    const op = await createAccount(pool, {
      name: 'Bench operator',
      email: `operator-${world.name}@example.com`,
      password: randomBytes(12).toString('hex'),
      operator: true,
    });
    const keys = new SigningKeys(pool, world.config.SECRET_KEY);
    await keys.load();
    const { token } = await issueAccessToken(
      keys,
      { accountId: op.account_id, userId: op.user_id, clientId: 'cli_bench_operator', scopes: ['admin'] },
      { issuer: world.config.PUBLIC_BASE_URL, ttlSeconds: 6 * 3600 },
    );
    await insertCustomers(pool, 0, opts.customers);
    await writeAllShards(pool, await new Kvm(nc).open(new NatsNames(world.config.NATS_NAMESPACE).customerBucket));
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const meter = (await (
      await fetch(`${apiUrl}/v1/meters`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'bench deployment', unit: 'calls', aggregation: 'sum', scope: 'deployment' }),
      })
    ).json()) as { id: string };
    // Every api knows the last customer (the registry watch delivered every shard) before the load starts.
    for (let tries = 0; ; tries++) {
      const r = await fetch(`${apiUrl}/v1/meters/${meter.id}/usage`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ value: 1, timestamp: opts.timestamp, customer: externalId(opts.customers - 1) }),
      });
      await r.arrayBuffer();
      if (r.status === 202) break;
      if (tries > 600) throw new Error(`the api never accepted the last customer (${r.status})`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const bodies: string[] = [];
    for (let first = 0; first < opts.customers; first += opts.batch) {
      bodies.push(
        JSON.stringify(
          Array.from({ length: Math.min(opts.batch, opts.customers - first) }, (_, i) => ({
            value: (i % 10) + 1,
            timestamp: opts.timestamp,
            customer: externalId(first + i),
          })),
        ),
      );
    }
    return { adminToken: token, meterId: meter.id, customers: opts.customers, bodies };
  } finally {
    await nc.close();
    await pool.end();
  }
}

/** Spawn → IPC 'ready' (listening) of an api process on the world, and its resident memory then. */
async function apiStart(world: BenchWorld): Promise<{ seconds: number; rssMb: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [repoPath('dist/bench/api-process.js')], {
    env: { ...process.env, ...world.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  try {
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: { type?: string }) => m?.type === 'ready' && resolve());
      child.on('exit', (code) => reject(new Error(`api exited (${code}) before it was ready: ${stderr.slice(-2000)}`)));
    });
    const seconds = (performance.now() - t0) / 1000;
    const status = await import('node:fs/promises').then((fs) => fs.readFile(`/proc/${child.pid}/status`, 'utf8'));
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    return { seconds, rssMb: Math.round(rssKb / 1024) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** The registry at `total` customers: bulk-loaded, then measured in a process of its own and in a starting api. */
export async function measureRegistryScale(
  world: BenchWorld,
  opts: { total: number; already: number; log: (m: string) => void },
): Promise<RegistryScale> {
  const small = await apiStart(world);
  opts.log(`api start with ${opts.already} customers: ${small.seconds.toFixed(2)} s`);
  const pool = new pg.Pool({ connectionString: world.config.DATABASE_URL, max: 2 });
  const nc = await connectNats(world.config.NATS_URL, 'bench-registry');
  try {
    // In Postgres too: the api's reconciliation would otherwise (rightly) remove customers Postgres doesn't have.
    await insertCustomers(pool, opts.already, opts.total - opts.already);
    const written = await writeAllShards(
      pool,
      await new Kvm(nc).open(new NatsNames(world.config.NATS_NAMESPACE).customerBucket),
    );
    opts.log(`registry: ${written} accounts in the customer bucket`);
  } finally {
    await nc.close();
    await pool.end();
  }
  const memory = await new Promise<{ customers: number; bytes_per_customer: number; load_s: number }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, ['--expose-gc', repoPath('dist/bench/registry-memory.js')], {
        env: { ...process.env, ...world.env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.on('exit', (code) =>
        code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`registry-memory: ${code}`)),
      );
    },
  );
  const big = await apiStart(world);
  opts.log(
    `registry: ${memory.customers} customers, ${memory.bytes_per_customer} bytes each, loaded in ${memory.load_s} s; api start ${big.seconds.toFixed(2)} s (rss ${big.rssMb} MB)`,
  );
  return {
    customers: memory.customers,
    bytes_per_customer: memory.bytes_per_customer,
    registry_load_s: memory.load_s,
    api_start_s: Math.round(big.seconds * 100) / 100,
    api_start_s_small: Math.round(small.seconds * 100) / 100,
    api_rss_mb: big.rssMb,
  };
}

/** What the attributed phase needs of bench/run.ts: its load runner, counters and the other phases' costs. */
export interface AttributedRun {
  world: BenchWorld;
  apiUrl: string;
  customers: number;
  batch: number;
  timestamp: string;
  /** Customers of the registry scale measurement (not above `customers`: skipped). */
  registryCustomers: number;
  log: (m: string) => void;
  /** Runs the load phase `attributed` against `url` with these bodies, one per request in turn. */
  load: (url: string, bodies: string[], headers: Record<string, string>) => Promise<void>;
  /** Records the api processes accepted so far. */
  acceptedRecords: () => Promise<number>;
  /** Distinct stored records of the meter, once they reach `expected` (or a deadline). */
  storedRecords: (meterId: string, expected: number) => Promise<number>;
  /** Per tool: the pipeline's CPU µs per record of a load phase run so far. */
  usPerRecord: (phase: 'attributed' | 'batched') => Record<string, number>;
}

/**
 * Sends every body once, 8 at a time; returns the seconds it took. A customer's first records take its first rate
 * lease (a KV write: shared/limits/rate-leases.ts), after which its records cost no I/O for as long as it keeps
 * sending. The timed load compares the steady state of both traffic shapes, so each customer is past its first
 * lease before it starts — the 3 s warm-up reached only about a fifth of the 10,000 customers, and their first
 * leases (about 150 µs of api CPU each, at most ~1,000 a second from one process here) fell into the window.
 */
async function sendEachOnce(url: string, bodies: string[], headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const sender = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const res = await fetch(url, { method: 'POST', headers, body });
      await res.arrayBuffer();
      if (res.status !== 202) throw new Error(`first records: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, sender));
  return (performance.now() - t0) / 1000;
}

/**
 * Operator mode: batched records for `customers` customers through one admin token (each record naming its own
 * customer) to one deployment meter, the pipeline's CPU per record against `batched` in the same run, the count
 * check of the meter, then the customer registry at `registryCustomers`.
 */
export async function runAttributedPhase(r: AttributedRun): Promise<AttributedResult> {
  const acceptedBefore = await r.acceptedRecords();
  const setup = await prepareAttributed(r.world, r.apiUrl, {
    customers: r.customers,
    batch: r.batch,
    timestamp: r.timestamp,
  });
  r.log(`attributed: ${r.customers} customers, deployment meter ${setup.meterId}, ${setup.bodies.length} bodies`);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${setup.adminToken}` };
  const url = `${r.apiUrl}/v1/meters/${setup.meterId}/usage`;
  const firstS = await sendEachOnce(url, setup.bodies, headers);
  r.log(`attributed: every customer's first records (one rate lease each) in ${firstS.toFixed(1)} s, before the load`);
  await r.load(url, setup.bodies, headers);
  const accepted = (await r.acceptedRecords()) - acceptedBefore;
  const stored = await r.storedRecords(setup.meterId, accepted);
  const base = r.usPerRecord('batched');
  const cpuRatio: Record<string, number> = {};
  for (const [tool, us] of Object.entries(r.usPerRecord('attributed')))
    if (base[tool]) cpuRatio[tool] = Math.round((us / base[tool]) * 100) / 100;
  return {
    customers: r.customers,
    cpu_ratio: cpuRatio,
    count_check: { accepted, stored, exact: accepted === stored },
    registry:
      r.registryCustomers > r.customers
        ? await measureRegistryScale(r.world, { total: r.registryCustomers, already: r.customers, log: r.log })
        : undefined,
  };
}

export function attributedLines(r: AttributedResult): string[] {
  const ratios = Object.entries(r.cpu_ratio)
    .map(([tool, x]) => `${tool} × ${x.toFixed(2)}`)
    .join(', ');
  const lines = [
    '',
    `attributed (operator mode, ${r.customers} customers): pipeline CPU per record vs unattributed batched, same run: ${ratios || '—'} (goal ≤ 1.1)`,
  ];
  if (r.count_check)
    lines.push(
      `attributed count check: ${r.count_check.accepted} accepted, ${r.count_check.stored} stored → ${r.count_check.exact ? 'EXACT' : 'MISMATCH'}`,
    );
  if (r.registry) {
    const g = r.registry;
    lines.push(
      `customer registry at ${g.customers} customers: ${g.bytes_per_customer} bytes per customer (goal ≤ 200), loaded in ${g.registry_load_s} s; api start ${g.api_start_s} s (goal ≤ 10 s; ${g.api_start_s_small} s with ${r.customers}), api rss ${g.api_rss_mb} MB`,
    );
  }
  return lines;
}
