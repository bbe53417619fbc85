/**
 * The api's own CPU per record of an operator's batch against a plain one, in one process, without servers
 * (issue 26's ratio, the api's part of it): what bench/phases/attributed.ts measures over the whole pipeline is
 * swayed by everything else on a shared machine; this times only the code that differs — the body's JSON.parse,
 * the batch rules (checkBatch: shape, value, timestamp, the customer lookup, the row) and the customers' rate
 * takes (takeCustomerRates, local buckets: no NATS) — alternating the two shapes so both see the same machine.
 *
 *   node dist/bench/attribution-cost.js [--customers 10000] [--rounds 5] [--seconds 2]
 */
import { CustomerTable } from '../shared/customers/table.js';
import { customerShard, type CustomerEntry } from '../shared/customers/shards.js';
import { Attribution } from '../shared/customers/attribution.js';
import { AccountRateLimiter } from '../shared/limits/rate-limiter.js';
import type { MeterRecord } from '../shared/meters/record.js';
import { newId } from '../shared/ids.js';
import { checkBatch, takeCustomerRates } from '../services/ingress/batch.js';
import type { RecordContext } from '../services/ingress/records.js';
import { arg } from './options.js';

const customers = arg('customers', 10_000);
const rounds = arg('rounds', 5);
const seconds = arg('seconds', 2);
const batch = 100;

const table = new CustomerTable();
const byShard = new Map<number, CustomerEntry[]>();
const externalId = (i: number) => `bench-customer-${String(i).padStart(7, '0')}`;
for (let i = 0; i < customers; i++) {
  const accountId = newId('acct');
  const shard = customerShard(accountId);
  const list = byShard.get(shard) ?? [];
  list.push({ accountId, customerId: newId('cus'), externalId: externalId(i) });
  byShard.set(shard, list);
}
for (const [shard, entries] of byShard) table.applyShard(shard, entries);
const lookup = { table, assertCurrent: () => undefined };

const operator = newId('acct');
const meter = (scope?: 'deployment'): MeterRecord => ({
  id: newId('mtr'),
  account_id: operator,
  type: 'counter',
  aggregation: 'sum',
  status: 'active',
  updated_at_ms: Date.now(),
  ...(scope ? { scope } : {}),
});
const plainMeter = meter();
const deploymentMeter = meter('deployment');
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

const limiter = new AccountRateLimiter(undefined);
const unlimited = () => 1e12;

/** CPU µs per record of `bodies` sent in turn for `seconds`. */
function run(bodies: string[], m: MeterRecord, attributed: boolean): number {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let records = 0;
  let i = 0;
  while (performance.now() - t0 < seconds * 1000) {
    for (let k = 0; k < 50; k++) {
      const body = bodies[i++ % bodies.length]!;
      const ctx: RecordContext = {
        accountId: operator,
        now: Date.now(),
        attribution: new Attribution({ accountId: operator, operator: attributed }, lookup),
      };
      if (attributed) ctx.takeRecordsEach = (accounts, slots) => limiter.takeEach('ingest', accounts, unlimited, slots);
      const b = takeCustomerRates(
        checkBatch(JSON.parse(body) as unknown[], () => m, ctx, false),
        ctx,
      );
      if (b instanceof Promise || b.accepted !== batch) throw new Error('every record must be accepted at once');
      records += b.accepted;
    }
  }
  const used = process.cpuUsage(cpu0);
  return (used.user + used.system) / records;
}

run(plainBodies, plainMeter, false);
run(attributedBodies, deploymentMeter, true);
const plain: number[] = [];
const attributed: number[] = [];
for (let r = 0; r < rounds; r++) {
  plain.push(run(plainBodies, plainMeter, false));
  attributed.push(run(attributedBodies, deploymentMeter, true));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p = median(plain);
const a = median(attributed);
process.stdout.write(
  `${JSON.stringify({ customers, plain_us_per_record: +p.toFixed(3), attributed_us_per_record: +a.toFixed(3), extra_us: +(a - p).toFixed(3), ratio: +(a / p).toFixed(3), plain, attributed })}\n`,
);
await limiter.stop();
