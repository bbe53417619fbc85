/**
 * What the cancelled-records lookup (services/domain/usage/cancellations-store.ts) costs a recompute and a raw read, and so
 * what a meter never corrected saves by skipping it (issue 18). On the ClickHouse of CLICKHOUSE_URL, in a
 * database of its own (dropped at the end):
 *
 *   node dist/bench/cancellation-lookup.js [--records 600000] [--rounds 8]
 *
 * `records` records over 24 closed hours for each of two meters, one of them with a cancellation: recomputeHours
 * of the 24 hours of each (with and without the lookup), and a raw read of them (queryUsage, no sweep: every hour
 * raw) with `neverCorrected` and without, rounds alternating. Prints one JSON document of wall-clock
 * milliseconds per round and their medians.
 */
import { createClickhouse } from '../shared/clients/clickhouse.js';
import { migrateClickhouse } from '../shared/migrate.js';
import { recomputeHours, HOUR_MS } from '../services/domain/usage/rollups-store.js';
import { queryUsage } from '../services/domain/usage/query.js';
import { CANCELLATIONS_TABLE } from '../services/domain/usage/cancellations-store.js';
import { USAGE_TABLE } from '../shared/usage/wire.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? Number(process.argv[i + 1]) : fallback;
}

const url = process.env.CLICKHOUSE_URL;
if (!url) throw new Error('CLICKHOUSE_URL is required');
const records = arg('records', 600_000);
const rounds = arg('rounds', 8);
const db = `bench_cancel_lookup_${Date.now()}`;
await migrateClickhouse(url, db);
const ch = createClickhouse(url, db);
try {
  // Two meters with the same records; `corrected` gets one cancellation (an id no record has: its answer stays
  // the same, its recomputes run the lookup). Rounds alternate between them, so load changes hit both alike.
  const accountId = 'acct_bench';
  const [plain, corrected] = ['mtr_plain', 'mtr_corrected'];
  const from = Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 48 * HOUR_MS;
  for (const meterId of [plain, corrected]) {
    await ch.command({
      query: `INSERT INTO ${db}.${USAGE_TABLE} (account_id, meter_id, ts_ms, record_id, value, received_ms, dim_keys, dim_values)
        SELECT '${accountId}', '${meterId}', toInt64(${from}) + toInt64(intDiv(number * ${24 * HOUR_MS}, ${records})) AS ts, concat('r', toString(number)),
          toDecimal128(number % 97, 9), ts, ['model'], [concat('m', toString(number % 20))] FROM numbers(${records})`,
      clickhouse_settings: { max_execution_time: 600 },
    });
  }
  await ch.insert({
    table: `${db}.${CANCELLATIONS_TABLE}`,
    values: [
      {
        account_id: accountId,
        meter_id: corrected,
        record_id: 'ghost',
        hour: -1,
        correction_id: 'bench',
        cancelled_ms: Date.now(),
      },
    ],
    format: 'JSONEachRow',
  });
  const hours = Array.from({ length: 24 }, (_, i) => from / HOUR_MS + i);
  const ms = async (f: () => Promise<unknown>) => {
    const t = performance.now();
    await f();
    return Math.round(performance.now() - t);
  };
  const recompute = (meterId: string) => () => recomputeHours(ch, db, [{ accountId, meterId, hours }]);
  const read = (neverCorrected: boolean) => () =>
    queryUsage(ch, db, {
      accountId,
      meterId: plain,
      type: 'counter',
      startMs: from,
      endMs: from + 24 * HOUR_MS,
      window: 'hour',
      neverCorrected,
    });
  for (const f of [recompute(plain), recompute(corrected), read(true), read(false)]) await f(); // warm
  const out = {
    records,
    recompute_never_corrected: [] as number[],
    recompute_corrected: [] as number[],
    raw_read_skip: [] as number[],
    raw_read_lookup: [] as number[],
  };
  for (let i = 0; i < rounds; i++) {
    out.recompute_never_corrected.push(await ms(recompute(plain)));
    out.recompute_corrected.push(await ms(recompute(corrected)));
    out.raw_read_skip.push(await ms(read(true)));
    out.raw_read_lookup.push(await ms(read(false)));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [skip, lookup] = [await read(true)(), await read(false)()];
  console.log(
    JSON.stringify({
      ...out,
      medians: Object.fromEntries(
        Object.entries(out)
          .filter(([, v]) => Array.isArray(v))
          .map(([k, v]) => [k, median(v as number[])]),
      ),
      same_answer: skip.total.count === lookup.total.count && skip.total.sum === lookup.total.sum,
    }),
  );
} finally {
  await ch.command({ query: `DROP DATABASE IF EXISTS ${db}` });
  await ch.close();
}
