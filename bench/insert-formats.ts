/**
 * What ClickHouse spends to take usage rows in each INSERT format (issue 11: cheaper storage writes), on a
 * private ClickHouse (bench/private-servers.ts: its CPU is this run's alone), into a copy of usage_records.
 *
 *   node dist/bench/insert-formats.js [--rows 200000] [--block 50000] [--rounds 3] [--with-mv]
 *
 * For each format: the rows are encoded once by the client (timed: what the consumer would pay), inserted
 * `rounds` times in blocks of `--block` rows, and ClickHouse's CPU (from /proc) per row is reported; the
 * stored sum and count are checked against the rows (exact, Decimal(38, 9)). --with-mv adds the hours-touched
 * materialized view every real INSERT also feeds. Prints one JSON document.
 */
import { cpuSeconds } from './cpu.js';
import { startPrivateServers } from './private-servers.js';
import { createClickhouse } from '../shared/clients/clickhouse.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? Number(process.argv[i + 1]) : fallback;
}

interface Row {
  account: string;
  meter: string;
  tsMs: number;
  id: string;
  /** Exact decimal text, at most 9 places. */
  value: string;
  receivedMs: number;
}

const SCALE = 10n ** 9n;
/** Trailing zeros off (a loop, not a regex: test/unit/safe-regex.test.ts wants every regex linear). */
function trimZeros(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 48) end--;
  return s.slice(0, end);
}
const decimalNorm = (d: string) => {
  if (!d.includes('.')) return d;
  const t = trimZeros(d);
  return t.endsWith('.') ? t.slice(0, -1) : t;
};

function tsv(rows: Row[]): Buffer {
  let s = '';
  for (const r of rows) s += `${r.account}\t${r.meter}\t${r.tsMs}\t${r.id}\t${r.value}\t${r.receivedMs}\n`;
  return Buffer.from(s);
}

/** RowBinary: String = LEB128 length + bytes; Int64 little-endian; Decimal(38, 9) = Int128 (value × 10^9) little-endian. */
function rowBinary(rows: Row[]): Buffer {
  const out = Buffer.allocUnsafe(rows.length * 160);
  let o = 0;
  const str = (s: string) => {
    let n = Buffer.byteLength(s);
    while (n >= 0x80) {
      out[o++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    out[o++] = n;
    o += out.write(s, o);
  };
  for (const r of rows) {
    str(r.account);
    str(r.meter);
    out.writeBigInt64LE(BigInt(r.tsMs), o);
    o += 8;
    str(r.id);
    const [int, frac = ''] = r.value.split('.');
    const scaled = BigInt(int!) * SCALE + (int!.startsWith('-') ? -1n : 1n) * BigInt((frac + '000000000').slice(0, 9));
    const u = BigInt.asUintN(128, scaled);
    out.writeBigUInt64LE(u & 0xffffffffffffffffn, o);
    out.writeBigUInt64LE(u >> 64n, o + 8);
    o += 16;
    out.writeBigInt64LE(BigInt(r.receivedMs), o);
    o += 8;
  }
  return out.subarray(0, o);
}

const FORMATS: Record<string, (rows: Row[]) => Buffer> = { TabSeparated: tsv, RowBinary: rowBinary };

async function main(): Promise<void> {
  const total = arg('rows', 200_000);
  const block = arg('block', 50_000);
  const rounds = arg('rounds', 3);
  const withMv = process.argv.includes('--with-mv');
  const servers = await startPrivateServers(1024 ** 3);
  const ch = createClickhouse(servers.clickhouseUrl);
  try {
    const now = Date.now();
    const rows: Row[] = Array.from({ length: total }, (_, i) => ({
      account: 'acct_4f3kQ2xY8pLm0NvR7sT1uW',
      meter: `mtr_${(i % 10).toString().padStart(22, '0')}`,
      tsMs: now - 60_000 + (i % 1000),
      id: `use_${i.toString(36).padStart(22, '0')}`,
      value: i % 3 === 0 ? String(i % 100) : `${i % 100}.${(i % 7) + 1}25`,
      receivedMs: now,
    }));
    let expectedSum = 0n;
    for (const r of rows) {
      const [int, frac = ''] = r.value.split('.');
      expectedSum += BigInt(int!) * SCALE + BigInt((frac + '000000000').slice(0, 9));
    }
    const results: Record<string, unknown>[] = [];
    for (const [format, encode] of Object.entries(FORMATS)) {
      const table = `default.usage_${format.toLowerCase()}`;
      await ch.command({ query: `DROP TABLE IF EXISTS ${table}` });
      await ch.command({
        query: `CREATE TABLE ${table} (account_id String, meter_id String, ts_ms Int64, record_id String, value Decimal(38, 9), received_ms Int64) ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM(toDateTime(intDiv(ts_ms, 1000), 'UTC')) ORDER BY (account_id, meter_id, ts_ms, record_id)`,
      });
      if (withMv) {
        // What migrations add to every usage INSERT: the hours-touched view (infra/migrations/clickhouse/310_usage_rollups.sql).
        await ch.command({ query: `DROP TABLE IF EXISTS ${table}_touched` });
        await ch.command({ query: `DROP TABLE IF EXISTS ${table}_touched_mv` });
        await ch.command({
          query: `CREATE TABLE ${table}_touched (hour Int64, account_id String, meter_id String) ENGINE = ReplacingMergeTree() ORDER BY (hour, account_id, meter_id)`,
        });
        await ch.command({
          query: `CREATE MATERIALIZED VIEW ${table}_touched_mv TO ${table}_touched AS SELECT intDiv(ts_ms, 3600000) AS hour, account_id, meter_id FROM ${table} GROUP BY hour, account_id, meter_id`,
        });
      }
      const blocks: Buffer[] = [];
      const t0 = performance.now();
      for (let i = 0; i < rows.length; i += block) blocks.push(encode(rows.slice(i, i + block)));
      const encodeUsPerRow = ((performance.now() - t0) * 1000) / rows.length;
      const cpu0 = cpuSeconds(servers.clickhousePid);
      const w0 = performance.now();
      for (let r = 0; r < rounds; r++) {
        for (const b of blocks) {
          const res = await fetch(
            `${servers.clickhouseUrl.replace(/\/$/, '')}/?query=${encodeURIComponent(`INSERT INTO ${table} FORMAT ${format}`)}`,
            { method: 'POST', body: new Uint8Array(b) },
          );
          if (!res.ok) throw new Error(`${format}: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        }
      }
      const wall = (performance.now() - w0) / 1000;
      const chCpu = cpuSeconds(servers.clickhousePid) - cpu0;
      const rs = await ch.query({
        query: `SELECT toString(sum(value)) AS s, count() AS c FROM ${table} FINAL`,
        format: 'JSONEachRow',
      });
      const [got] = await rs.json<{ s: string; c: string }>();
      const expected = `${expectedSum / SCALE}${expectedSum % SCALE ? '.' + trimZeros((expectedSum % SCALE).toString().padStart(9, '0')) : ''}`;
      results.push({
        format,
        bytes_per_row: Math.round(blocks.reduce((s, b) => s + b.length, 0) / rows.length),
        client_encode_us_per_row: Math.round(encodeUsPerRow * 100) / 100,
        clickhouse_us_per_row: Math.round(((chCpu * 1e6) / (rows.length * rounds)) * 100) / 100,
        rows_per_s: Math.round((rows.length * rounds) / wall),
        exact: Number(got!.c) === rows.length && decimalNorm(got!.s) === decimalNorm(expected),
        stored: got,
      });
    }
    process.stdout.write(JSON.stringify({ rows: total, block, rounds, with_mv: withMv, results }, null, 2) + '\n');
  } finally {
    await ch.close();
    await servers.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
