/**
 * ClickHouse's CPU per usage row, isolated from the rest of the pipeline (issue 11: cheaper storage writes): a
 * private ClickHouse per variant (bench/private-servers.ts, so its CPU is this run's alone), the real schema
 * (infra/migrations/clickhouse, with the hours-touched view), rows in the USAGE wire format (shared/usage/wire.ts
 * RowWriter, the bytes the consumer passes through), inserted as the consumer does (blocks of --block rows, 2 in
 * flight). The CPU is counted from the first INSERT until the background merges have settled, less the idle
 * server's own (measured first), so the merges an INSERT causes are part of its cost.
 *
 *   node dist/bench/storage-writes.js [--rows 1000000] [--block 50000] [--meters 1] [--variants base,no-mv]
 *                                     [--repeat 2]
 *
 * Variants (alternated --repeat times, so a machine's load drifts over all of them alike):
 *   base          the schema as migrated, the server as infra/stack/clickhouse.ts configures it
 *   no-mv         without usage_hours_touched_mv (what the view costs)
 *   block=<n>     INSERT blocks of n rows
 *   ts-spread     each 100 rows' timestamps 1 ms apart (emitters' event times) instead of one timestamp for all
 *   presorted     rows sent in the table's key order (does a sorted block make ClickHouse's sort cheaper?)
 *   mergetree     a plain MergeTree (no replacing), no view: what the dedup engine and the view cost together
 *   null          ENGINE = Null, no view: receiving and parsing the rows only, the floor of any INSERT
 *   claims        the identity window's claims instead (usage_claims, services/domain/usage/claims-store.ts): one
 *                 line per record as the consumer writes them (client ids, as the retry-identity phase sends)
 *   claims-g8192  the same with ClickHouse's default index granularity instead of the table's 256
 *   claims-hash   the same with id_hash sent in each line instead of computed by ClickHouse (MD5)
 *   claims-null   the claims into ENGINE = Null: receiving and parsing them only
 *   claims-min    the least an index of identities can store: (account, meter, a 64-bit hash of the id) in a
 *                 plain MergeTree keyed by them (not exact: hashes may collide) — the floor of any stored claim
 * Rows: one account, --meters meters, one timestamp, random server-assigned ids (the bench's batched phase).
 * Every variant that stores rows checks the count read back (FINAL where it dedups: exact). Prints one JSON document.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { cpuSeconds } from './cpu.js';
import { startPrivateServers } from './private-servers.js';
import { createClickhouse, type ClickHouseClient } from '../shared/clients/clickhouse.js';
import { migrateClickhouse } from '../shared/migrate.js';
import { RowWriter, USAGE_COLUMNS, USAGE_TABLE } from '../shared/usage/wire.js';
import { CLAIMS_TABLE } from '../services/domain/usage/claims.js';

const CLAIM_COLUMNS = ['account_id', 'meter_id', 'record_id', 'ts_ms', 'claimed_ms', 'batch'] as const;
import { newUsageId } from '../shared/usage/ids.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round2 = (x: number) => Math.round(x * 100) / 100;

const DATABASE = 'storage_writes';

/** The rows of one INSERT block each, encoded once (the consumer's cost is not ClickHouse's). */
function encodeBlocks(rows: number, block: number, meters: number, presorted = false, tsSpread = false): Buffer[] {
  const account = 'acct_4f3kQ2xY8pLm0NvR7sT1uW';
  const ts = Date.now() - 60_000;
  const blocks: Buffer[] = [];
  for (let i = 0; i < rows; i += block) {
    const n = Math.min(block, rows - i);
    const w = new RowWriter(n);
    const rowsOf = Array.from({ length: n }, (_, j) => ({
      meter: `mtr_${String((i + j) % meters).padStart(22, '0')}`,
      id: newUsageId(),
      value: String(((i + j) % 10) + 1),
    }));
    // presorted: in the table's key order (one account, one timestamp: meter, then id), as a sorting consumer would send them.
    if (presorted)
      rowsOf.sort((a, b) => (a.meter < b.meter ? -1 : a.meter > b.meter ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    // tsSpread: each run of 100 rows (a request) spans 100 ms of event time, as emitters' own timestamps do.
    rowsOf.forEach((r, j) => w.row(account, r.meter, tsSpread ? ts + (j % 100) : ts, r.id, r.value, ts + 5));
    blocks.push(Buffer.from(w.bytes()));
  }
  return blocks;
}

/**
 * The claims of as many records (claims.ts claimOf's lines), client ids; `hash`: id_hash at the end of each line;
 * `min`: only account, meter and id_hash.
 */
function encodeClaims(rows: number, block: number, meters: number, mode: 'lines' | 'hash' | 'min'): Buffer[] {
  const account = 'acct_4f3kQ2xY8pLm0NvR7sT1uW';
  const ts = Date.now() - 60_000;
  const blocks: Buffer[] = [];
  for (let i = 0; i < rows; i += block) {
    const n = Math.min(block, rows - i);
    let text = '';
    for (let j = 0; j < n; j++) {
      const meter = `mtr_${String((i + j) % meters).padStart(22, '0')}`;
      const id = `client-${ts}-${i + j}-${newUsageId().slice(4, 14)}`;
      const hash = () => createHash('md5').update(`${account}\0${meter}\0${id}`).digest().readBigUInt64LE(0);
      if (mode === 'min') text += `${account}\t${meter}\t${hash()}\n`;
      else {
        text += `${account}\t${meter}\t${id}\t${ts}\t${ts + 5}\t${1 + Math.floor(i / 1000)}`;
        text += mode === 'hash' ? `\t${hash()}\n` : '\n';
      }
    }
    blocks.push(Buffer.from(text));
  }
  return blocks;
}

async function events(ch: ClickHouseClient): Promise<Record<string, number>> {
  const rs = await ch.query({
    query: `SELECT event, value FROM system.events WHERE event IN ('InsertQuery', 'InsertedRows', 'Merge', 'MergedRows')`,
    format: 'JSONEachRow',
  });
  return Object.fromEntries((await rs.json<{ event: string; value: string }>()).map((e) => [e.event, Number(e.value)]));
}

/** Until no merge has run and the active part count has not changed for `quietMs`. */
async function mergesSettled(ch: ClickHouseClient, quietMs = 1500): Promise<void> {
  let last = '';
  let since = Date.now();
  for (;;) {
    const rs = await ch.query({
      query: `SELECT (SELECT count() FROM system.merges) AS m, (SELECT count() FROM system.parts WHERE active AND database = '${DATABASE}') AS p`,
      format: 'JSONEachRow',
    });
    const [r] = await rs.json<{ m: string; p: string }>();
    const now = `${r!.m}/${r!.p}`;
    if (now !== last || r!.m !== '0') {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return;
    await sleep(100);
  }
}

async function runVariant(
  variant: string,
  rows: number,
  defaultBlock: number,
  meters: number,
): Promise<Record<string, unknown>> {
  const block = variant.startsWith('block=') ? Number(variant.slice('block='.length)) : defaultBlock;
  const claims = variant.startsWith('claims');
  const blocks = claims
    ? encodeClaims(rows, block, meters, variant === 'claims-min' ? 'min' : variant === 'claims-hash' ? 'hash' : 'lines')
    : encodeBlocks(rows, block, meters, variant === 'presorted', variant === 'ts-spread');
  const table = claims ? CLAIMS_TABLE : USAGE_TABLE;
  const columns: [string, ...string[]] = !claims
    ? [...USAGE_COLUMNS]
    : variant === 'claims-min'
      ? ['account_id', 'meter_id', 'id_hash']
      : variant === 'claims-hash'
        ? [...CLAIM_COLUMNS, 'id_hash']
        : [...CLAIM_COLUMNS];
  const servers = await startPrivateServers(64 * 1024 ** 2);
  const ch = createClickhouse(servers.clickhouseUrl, DATABASE);
  try {
    await migrateClickhouse(servers.clickhouseUrl, DATABASE);
    if (variant === 'no-mv') await ch.command({ query: `DROP TABLE ${DATABASE}.usage_hours_touched_mv` });
    if (variant === 'claims-min') {
      await ch.command({ query: `DROP TABLE ${DATABASE}.${CLAIMS_TABLE}` });
      await ch.command({
        query: `CREATE TABLE ${DATABASE}.${CLAIMS_TABLE} (account_id String, meter_id String, id_hash UInt64) ENGINE = MergeTree() ORDER BY (account_id, meter_id, id_hash)`,
      });
    }
    if (variant === 'claims-g8192' || variant === 'claims-null')
      await recreate(ch, CLAIMS_TABLE, (ddl) =>
        variant === 'claims-null'
          ? ddl.replace(/\) ENGINE = [\s\S]*$/, ') ENGINE = Null')
          : ddl.replace('index_granularity = 256', 'index_granularity = 8192'),
      );
    if (variant === 'null' || variant === 'mergetree') {
      // The floor: what receiving and parsing the rows costs (Null keeps nothing), or a MergeTree without replacing.
      await ch.command({ query: `DROP TABLE ${DATABASE}.usage_hours_touched_mv` });
      await recreate(ch, USAGE_TABLE, (ddl) =>
        variant === 'null'
          ? ddl.replace(/\) ENGINE = [\s\S]*$/, ') ENGINE = Null')
          : ddl.replace('ReplacingMergeTree()', 'MergeTree()'),
      );
    }
    await mergesSettled(ch);
    // The idle server's own CPU (asynchronous metrics, part cleanup), subtracted below.
    const idle0 = cpuSeconds(servers.clickhousePid);
    const i0 = performance.now();
    await sleep(3000);
    const idleCores = (cpuSeconds(servers.clickhousePid) - idle0) / ((performance.now() - i0) / 1000);
    const ev0 = await events(ch);
    const cpu0 = cpuSeconds(servers.clickhousePid);
    const t0 = performance.now();
    let next = 0;
    const inserter = async () => {
      while (next < blocks.length) {
        const b = blocks[next++]!;
        await ch.insert({ table, values: Readable.from([b], { objectMode: false }), format: 'TabSeparated', columns });
      }
    };
    await Promise.all([inserter(), inserter()]);
    const insertS = (performance.now() - t0) / 1000;
    const insertCpu = cpuSeconds(servers.clickhousePid) - cpu0;
    await mergesSettled(ch);
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(servers.clickhousePid) - cpu0 - idleCores * wall;
    const ev1 = await events(ch);
    // The Null engine keeps nothing: there is no count to check.
    const stored =
      variant === 'null' || variant === 'claims-null'
        ? undefined
        : await storedCount(ch, table, variant === 'mergetree' || variant === 'claims-min' ? '' : ' FINAL');
    return {
      variant,
      block,
      inserts: (ev1.InsertQuery ?? 0) - (ev0.InsertQuery ?? 0),
      merged_rows_per_row: round2(((ev1.MergedRows ?? 0) - (ev0.MergedRows ?? 0)) / rows),
      idle_cores: Math.round(idleCores * 10_000) / 10_000,
      insert_s: round2(insertS),
      settled_s: round2(wall),
      clickhouse_us_per_row_inserts: round2((insertCpu * 1e6) / rows),
      clickhouse_us_per_row: round2((cpu * 1e6) / rows),
      exact: stored === undefined ? 'n/a (nothing stored)' : stored === rows,
    };
  } finally {
    await ch.close();
    await servers.stop();
  }
}

/** Drops `table` and creates it again from its migrated DDL as `edit` changes it (another engine or setting). */
async function recreate(ch: ClickHouseClient, table: string, edit: (ddl: string) => string): Promise<void> {
  const rs = await ch.query({ query: `SHOW CREATE TABLE ${DATABASE}.${table}`, format: 'TabSeparatedRaw' });
  const ddl = (await rs.text()).trim();
  await ch.command({ query: `DROP TABLE ${DATABASE}.${table}` });
  await ch.command({ query: edit(ddl) });
}

async function storedCount(ch: ClickHouseClient, table: string, final: string): Promise<number> {
  const rs = await ch.query({ query: `SELECT count() AS c FROM ${table}${final}`, format: 'JSONEachRow' });
  return Number((await rs.json<{ c: string }>())[0]!.c);
}

async function main(): Promise<void> {
  const rows = Number(arg('rows', '1000000'));
  const block = Number(arg('block', '50000'));
  const meters = Number(arg('meters', '1'));
  const repeat = Number(arg('repeat', '2'));
  const variants = arg('variants', 'base,no-mv').split(',');
  const results: Record<string, unknown>[] = [];
  for (let r = 0; r < repeat; r++) {
    for (const v of variants) {
      const res = await runVariant(v, rows, block, meters);
      process.stderr.write(`[storage-writes] ${JSON.stringify(res)}\n`);
      results.push(res);
    }
  }
  process.stdout.write(JSON.stringify({ rows, block, meters, results }, null, 2) + '\n');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
