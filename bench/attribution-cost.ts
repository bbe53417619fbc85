/**
 * The api's own CPU per record of an operator's batch against a plain one, in one process, without servers
 * (issue 26's ratio, the api's part of it): what bench/phases/attributed.ts measures over the whole pipeline is
 * swayed by everything else on a shared machine; this times only the code that differs — the body's JSON.parse,
 * the batch rules (checkBatch: shape, value, timestamp, the customer lookup, the row) and the customers' rate
 * takes (takeCustomerRates) — alternating the two shapes so both see the same machine.
 *
 * The rates are taken as the api takes them: from tokens leased ahead (shared buckets kept in memory here, no
 * NATS), each customer's first lease made before the timing. `--baseline <dist>` loads the same modules from
 * another build too (another commit's `dist/`, built with `npx tsc -p .`) and alternates all four runs, so a
 * change is measured against its base on the same machine in the same minutes.
 *
 *   node dist/bench/attribution-cost.js [--customers 10000] [--rounds 5] [--seconds 2] [--baseline /tmp/main/dist]
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CustomerEntry } from '../shared/customers/shards.js';
import type { LeaseRequest, RateLeases } from '../shared/limits/rate-leases.js';
import type { MeterRecord } from '../shared/meters/record.js';
import type { RecordContext } from '../services/ingress/records.js';
import { arg } from './options.js';

const customers = arg('customers', 10_000);
const rounds = arg('rounds', 5);
const seconds = arg('seconds', 2);
const baselineAt = process.argv.indexOf('--baseline');
const baseline = baselineAt === -1 ? undefined : process.argv[baselineAt + 1];
const batch = 100;

/** The modules measured, from one build (`dist` is its root). */
async function modulesOf(dist: string) {
  const at = (file: string) => pathToFileURL(path.join(dist, file)).href;
  return {
    table: (await import(at('shared/customers/table.js'))) as typeof import('../shared/customers/table.js'),
    shards: (await import(at('shared/customers/shards.js'))) as typeof import('../shared/customers/shards.js'),
    attribution: (await import(
      at('shared/customers/attribution.js')
    )) as typeof import('../shared/customers/attribution.js'),
    limiter: (await import(at('shared/limits/rate-limiter.js'))) as typeof import('../shared/limits/rate-limiter.js'),
    ids: (await import(at('shared/ids.js'))) as typeof import('../shared/ids.js'),
    batch: (await import(at('services/ingress/batch.js'))) as typeof import('../services/ingress/batch.js'),
  };
}
type Modules = Awaited<ReturnType<typeof modulesOf>>;

/** Shared buckets that grant every lease in full (the customers' limits are far above what one process sends). */
const grantingLeases = {
  reachable: true,
  lease: async (_key: string, _shape: unknown, r: LeaseRequest) => ({ granted: r.take + r.extra, left: 1e15, at: 0 }),
  forget: () => undefined,
} as unknown as RateLeases;

const externalId = (i: number) => `bench-customer-${String(i).padStart(7, '0')}`;
const ts = new Date(Date.now() - 60_000).toISOString();
const plainBodies = [JSON.stringify(Array.from({ length: batch }, (_, i) => ({ value: (i % 10) + 1, timestamp: ts })))];
const attributedBodies: string[] = [];
for (let first = 0; first < customers; first += batch)
  attributedBodies.push(
    JSON.stringify(
      Array.from({ length: Math.min(batch, customers - first) }, (_, i) => ({
        value: (i % 10) + 1,
        timestamp: ts,
        customer: externalId(first + i),
      })),
    ),
  );

/** One build's registry of `customers`, rate limiter and meters, and its two timed runs (CPU µs per record). */
async function harness(m: Modules) {
  const table = new m.table.CustomerTable();
  const byShard = new Map<number, CustomerEntry[]>();
  for (let i = 0; i < customers; i++) {
    const accountId = m.ids.newId('acct');
    const shard = m.shards.customerShard(accountId);
    const list = byShard.get(shard) ?? [];
    list.push({ accountId, customerId: m.ids.newId('cus'), externalId: externalId(i) });
    byShard.set(shard, list);
  }
  for (const [shard, entries] of byShard) table.applyShard(shard, entries);
  const lookup = { table, assertCurrent: () => undefined };
  const operator = m.ids.newId('acct');
  const meter = (scope?: 'deployment'): MeterRecord => ({
    id: m.ids.newId('mtr'),
    account_id: operator,
    type: 'counter',
    aggregation: 'sum',
    status: 'active',
    updated_at_ms: Date.now(),
    ...(scope ? { scope } : {}),
  });
  const plainMeter = meter();
  const deploymentMeter = meter('deployment');
  const limiter = new m.limiter.AccountRateLimiter(grantingLeases);
  const limit = () => 1e9;

  const one = (body: string, mt: MeterRecord, attributed: boolean) => {
    const ctx: RecordContext = {
      accountId: operator,
      now: Date.now(),
      attribution: new m.attribution.Attribution({ accountId: operator, operator: attributed }, lookup),
    };
    if (attributed) ctx.takeRecordsEach = (accounts, slots) => limiter.takeEach('ingest', accounts, limit, slots);
    return m.batch.takeCustomerRates(
      m.batch.checkBatch(JSON.parse(body) as unknown[], () => mt, ctx, false),
      ctx,
    );
  };

  /** CPU µs per record of `bodies` sent in turn for `seconds`. */
  const run = (bodies: string[], mt: MeterRecord, attributed: boolean): number => {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let records = 0;
    let i = 0;
    while (performance.now() - t0 < seconds * 1000) {
      for (let k = 0; k < 50; k++) {
        const b = one(bodies[i++ % bodies.length]!, mt, attributed);
        if (b instanceof Promise || b.accepted !== batch) throw new Error('every record must be accepted at once');
        records += b.accepted;
      }
    }
    const used = process.cpuUsage(cpu0);
    return (used.user + used.system) / records;
  };

  // Every customer's first lease, before any timing (the api's steady state: tokens held ahead).
  for (const body of attributedBodies) {
    const b = await one(body, deploymentMeter, true);
    if (b.accepted !== batch) throw new Error('every record must be accepted');
  }
  return {
    plain: () => run(plainBodies, plainMeter, false),
    attributed: () => run(attributedBodies, deploymentMeter, true),
    stop: () => limiter.stop(),
  };
}

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const builds = [{ name: 'this', h: await harness(await modulesOf(here)) }];
if (baseline) builds.push({ name: 'baseline', h: await harness(await modulesOf(path.resolve(baseline))) });
const runs = builds.map((b) => ({ name: b.name, plain: [] as number[], attributed: [] as number[] }));
for (const b of builds) {
  b.h.plain();
  b.h.attributed();
}
for (let r = 0; r < rounds; r++)
  builds.forEach((b, k) => {
    runs[k]!.plain.push(b.h.plain());
    runs[k]!.attributed.push(b.h.attributed());
  });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const r of runs) {
  const p = median(r.plain);
  const a = median(r.attributed);
  process.stdout.write(
    `${JSON.stringify({ build: r.name, customers, plain_us_per_record: +p.toFixed(3), attributed_us_per_record: +a.toFixed(3), extra_us: +(a - p).toFixed(3), ratio: +(a / p).toFixed(3), plain: r.plain.map((x) => +x.toFixed(3)), attributed: r.attributed.map((x) => +x.toFixed(3)) })}\n`,
  );
}
for (const b of builds) await b.h.stop();
