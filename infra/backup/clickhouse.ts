/**
 * The ClickHouse part of a backup: every table of the usage database that holds rows, whatever the migrations
 * made (no list of tables here: a migration that adds one is backed up without a change), in ClickHouse's Native
 * format, with its writable columns in the manifest.
 *
 * - Which tables (engine-aware): MergeTree-family, Log-family and Memory tables hold rows; on a cluster each
 *   Distributed table is read and written as the whole of its sharded local tables (those are then skipped);
 *   views hold none (the migrations make them again); `schema_migrations` is the schema's version, kept in the
 *   manifest. A table of any other engine stops the backup rather than being left out unnoticed.
 * - Dump order: tables without an `account_id` column first (progress marks such as the rollup sweep's
 *   watermark: a mark is written after the rows it vouches for), then the account tables newest migration
 *   first (derived tables before what they derive from: rollups before records). Reading a table after those
 *   it vouches for can then only find it behind them, the state a crash between the two writes leaves and the
 *   next recompute repairs — never ahead, which would make a restore read rows it does not have. Settled hours'
 *   settles are read before every account table and their marks after (they vouch the other way: a mark is
 *   written before its records).
 * - Restore: the target's schema is migrated to the backup's version first; every materialized view is detached
 *   while the rows load (each table gets exactly its dumped rows, a view does not derive them a second time) and
 *   attached again after; tables load in migration order, through the Distributed tables on a cluster with
 *   `insert_distributed_sync`, so every shard holds its rows when the restore returns.
 */
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ClickhouseReplicas, clickhouseUrls } from '../../shared/clients/clickhouse.js';
import { onEveryHost } from '../../shared/clickhouse-hosts.js';
import { clickhouseMigrations } from '../../shared/migrate.js';

export interface TableDump {
  name: string;
  engine: string;
  file: string;
  columns: string[];
  /** count() when the table was read (a table written meanwhile may differ by what arrived during the read). */
  rows: number;
  bytes: number;
}

interface TableRow {
  name: string;
  engine: string;
  engine_full: string;
}

const MIGRATIONS_TABLE = 'schema_migrations';
const HOLDS_ROWS = /MergeTree$|Log$|^Memory$/;
const NO_ROWS_OF_ITS_OWN = /^(View|MaterializedView|Null|Merge)$/;

function replicas(url: string): ClickhouseReplicas {
  // No default database: every query names it, and the checks run before it exists.
  return new ClickhouseReplicas(clickhouseUrls(url), undefined, { requestTimeoutMs: 3_600_000, quiet: true });
}

async function rowsOf<T>(ch: ClickhouseReplicas, query: string): Promise<T[]> {
  return ch.run(async (c) => (await c.query({ query, format: 'JSONEachRow' })).json<T>());
}

const quoted = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const ident = (s: string) => `\`${s.replace(/`/g, '\\`')}\``;

async function tablesOf(ch: ClickhouseReplicas, database: string): Promise<TableRow[]> {
  return rowsOf<TableRow>(
    ch,
    `SELECT name, engine, engine_full FROM system.tables WHERE database = ${quoted(database)} ORDER BY name`,
  );
}

/** Settled hours' tables, read first and last (see the dump). */
const SETTLES = new Set(['usage_hour_settles']);
const MARKS = new Set(['usage_hour_marks', 'usage_hour_touches']);

/**
 * Partial sums of the open hour's seconds (services/domain/usage/partials.ts) are left out: they are written after
 * the records they sum and vouched for by marks written after them, an order no dump of one table after another can
 * keep. Every mark is dumped as without partials instead, and a second's mark as its minute's (in the work list
 * too): a second whose marks lack partials may be read from the partials of inserts in flight
 * (services/domain/usage/hour-marks.ts isReadFromPartials), a minute with marks of its own never is, so a restored
 * deployment reads those minutes raw until they are settled.
 */
const LEFT_OUT = new Set(['usage_partials']);
const SECOND_AS_MINUTE =
  'toInt64(if(minute >= hour * 3600 AND minute < (hour + 1) * 3600, intDiv(minute, 60), minute))';
const DUMPED_AS: Record<string, Record<string, string>> = {
  usage_hour_marks: { partial: 'toUInt64(0)', minute: SECOND_AS_MINUTE },
  usage_hour_touches: { minute: SECOND_AS_MINUTE },
};

/** A column as the dump selects it: itself, or what DUMPED_AS stores in its place. */
function dumpedColumn(table: string, column: string): string {
  const as = DUMPED_AS[table]?.[column];
  return as ? `${as} AS ${ident(column)}` : ident(column);
}

/** Table names in the order the migration files create them (and the materialized views they create). */
async function migrationOrder(): Promise<{ tables: string[]; views: string[] }> {
  const tables: string[] = [];
  const views: string[] = [];
  for (const m of await clickhouseMigrations()) {
    for (const x of m.sql.matchAll(/CREATE\s+(MATERIALIZED\s+VIEW|TABLE)\s+IF\s+NOT\s+EXISTS\s+\{database\}\.(\w+)/gi))
      (/VIEW/i.test(x[1]!) ? views : tables).push(x[2]!);
  }
  return { tables, views };
}

/** `Distributed(cluster, 'db', 'table', key)` → its arguments, unquoted. */
function distributedArguments(engineFull: string): string[] {
  const open = engineFull.indexOf('(');
  const close = engineFull.indexOf(')', open);
  if (!engineFull.startsWith('Distributed') || open < 0) return [];
  return engineFull
    .slice(open + 1, close < 0 ? undefined : close)
    .split(',')
    .map((a) => a.trim().replace(/^'|'$/g, ''));
}

/** The tables whose rows a backup keeps, in migration order (unknown ones after, by name). */
async function dataTables(ch: ClickhouseReplicas, database: string): Promise<TableRow[]> {
  const all = await tablesOf(ch, database);
  // A Distributed table stands for the local tables it reads: Distributed(cluster, database, local[, key]).
  const behindDistributed = new Set(
    all
      .filter((t) => t.engine === 'Distributed')
      .map((t) => distributedArguments(t.engine_full)[2])
      .filter((x): x is string => !!x),
  );
  const out: TableRow[] = [];
  for (const t of all) {
    if (t.name === MIGRATIONS_TABLE || behindDistributed.has(t.name) || NO_ROWS_OF_ITS_OWN.test(t.engine)) continue;
    if (t.name.startsWith('.inner.'))
      throw new Error(`${database}.${t.name}: a materialized view without TO; write views TO a table of their own`);
    if (t.engine !== 'Distributed' && !HOLDS_ROWS.test(t.engine))
      throw new Error(`${database}.${t.name}: the backup does not know how to copy a ${t.engine} table`);
    out.push(t);
  }
  const { tables } = await migrationOrder();
  const rank = (name: string) => {
    const i = tables.indexOf(name);
    return i === -1 ? tables.length : i;
  };
  return out.sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

/** Columns a client writes (not MATERIALIZED or ALIAS ones), in table order. */
async function writableColumns(ch: ClickhouseReplicas, database: string, table: string): Promise<string[]> {
  return (await rowsOf<{ name: string; default_type: string }>(ch, `DESCRIBE TABLE ${database}.${ident(table)}`))
    .filter((r) => !['MATERIALIZED', 'ALIAS'].includes(r.default_type))
    .map((r) => r.name);
}

/** The versions of the applied ClickHouse migrations (none when the database does not exist yet). */
export async function clickhouseMigrationsApplied(url: string, database: string): Promise<string[]> {
  const ch = replicas(url);
  try {
    const exists = await rowsOf<{ n: string }>(
      ch,
      `SELECT count() AS n FROM system.tables WHERE database = ${quoted(database)} AND name = '${MIGRATIONS_TABLE}'`,
    );
    if (Number(exists[0]?.n ?? 0) === 0) return [];
    return (
      await rowsOf<{ version: string }>(
        ch,
        `SELECT DISTINCT version FROM ${database}.${MIGRATIONS_TABLE} FINAL ORDER BY version`,
      )
    ).map((r) => r.version);
  } finally {
    await ch.close();
  }
}

/** Settings of a backup's reads on a cluster: never from a replica that is behind its shard. */
const READ_SETTINGS = {
  max_replica_delay_for_distributed_queries: '1',
  fallback_to_stale_replicas_for_distributed_queries: 0,
} as const;

export async function dumpClickhouse(url: string, database: string, dir: string): Promise<TableDump[]> {
  const ch = replicas(url);
  try {
    const tables = (await dataTables(ch, database)).filter((t) => !LEFT_OUT.has(t.name));
    const out: TableDump[] = [];
    const columnsOf = new Map<string, string[]>();
    for (const t of tables) columnsOf.set(t.name, await writableColumns(ch, database, t.name));
    const marks = tables.filter((t) => !columnsOf.get(t.name)!.includes('account_id'));
    const byAccount = tables.filter((t) => columnsOf.get(t.name)!.includes('account_id')).reverse();
    // Settled hours (services/domain/usage/hour-marks.ts): a settle vouches for the rollups, so it is read before every
    // account table; an hour's marks are written before its records, so they are read after every one (a restored
    // record always has its mark, a restored settle never claims rollups the dump lacks).
    const first = byAccount.filter((t) => SETTLES.has(t.name));
    const last = byAccount.filter((t) => MARKS.has(t.name));
    const middle = byAccount.filter((t) => !SETTLES.has(t.name) && !MARKS.has(t.name));
    for (const t of [...marks, ...first, ...middle, ...last]) {
      const columns = columnsOf.get(t.name)!;
      const file = path.join('clickhouse', `${t.name}.native`);
      await ch.run(async (c) => {
        const r = await c.exec({
          query: `SELECT ${columns.map((col) => dumpedColumn(t.name, col)).join(', ')} FROM ${database}.${ident(t.name)} FORMAT Native`,
          clickhouse_settings: READ_SETTINGS,
        });
        await pipeline(r.stream, createWriteStream(path.join(dir, file), { mode: 0o600 }));
      });
      const rows = Number(
        (await rowsOf<{ n: string }>(ch, `SELECT count() AS n FROM ${database}.${ident(t.name)}`))[0]?.n ?? 0,
      );
      out.push({ name: t.name, engine: t.engine, file, columns, rows, bytes: statSync(path.join(dir, file)).size });
    }
    return out;
  } finally {
    await ch.close();
  }
}

/** Tables of the target that hold rows (a restore goes into an empty database), with their counts. */
export async function clickhouseRows(url: string, database: string): Promise<Record<string, number>> {
  const ch = replicas(url);
  try {
    const exists = await rowsOf<{ n: string }>(
      ch,
      `SELECT count() AS n FROM system.databases WHERE name = ${quoted(database)}`,
    );
    if (Number(exists[0]?.n ?? 0) === 0) return {};
    const out: Record<string, number> = {};
    for (const t of await dataTables(ch, database)) {
      const [r] = await rowsOf<{ n: string }>(ch, `SELECT count() AS n FROM ${database}.${ident(t.name)}`);
      if (Number(r?.n ?? 0) > 0) out[t.name] = Number(r!.n);
    }
    return out;
  } finally {
    await ch.close();
  }
}

/** Drops the (empty) database: a target migrated past its backup is made again at the backup's version. */
export async function dropClickhouseDatabase(url: string, database: string, cluster: string): Promise<void> {
  const query = `DROP DATABASE IF EXISTS ${database}`;
  // On a cluster, on each host directly (no ON CLUSTER: shared/clickhouse-hosts.ts says why).
  if (cluster) return onEveryHost(url, query);
  const ch = replicas(url);
  try {
    await ch.run((c) => c.command({ query }));
  } finally {
    await ch.close();
  }
}

/**
 * Loads the dumped tables into the target (migrated to the backup's version): views detached meanwhile. A view a
 * crashed restore left detached is attached first (ATTACH of a view the migrations dropped fails: ignored).
 */
export async function restoreClickhouse(
  url: string,
  database: string,
  cluster: string,
  dir: string,
  tables: TableDump[],
): Promise<{ table: string; rows: number }[]> {
  const ch = replicas(url);
  // A view is detached and attached on every host of a cluster, each directly (shared/clickhouse-hosts.ts).
  const ddl = (query: string) => (cluster ? onEveryHost(url, query) : ch.run((c) => c.command({ query })));
  try {
    const present = new Set((await tablesOf(ch, database)).map((t) => t.name));
    for (const v of (await migrationOrder()).views)
      if (!present.has(v)) await ddl(`ATTACH TABLE ${database}.${v}`).catch(() => undefined);
    const views = (await tablesOf(ch, database)).filter((t) => t.engine === 'MaterializedView').map((t) => t.name);
    const { tables: order } = await migrationOrder();
    const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
    const known = new Set((await dataTables(ch, database)).map((t) => t.name));
    const missing = tables.filter((t) => !known.has(t.name)).map((t) => t.name);
    if (missing.length) throw new Error(`the target has no table ${missing.join(', ')}: migrate it to this release`);
    for (const v of views) await ddl(`DETACH TABLE ${database}.${ident(v)}`);
    try {
      for (const t of [...tables].sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name))) {
        if (t.bytes === 0) continue;
        await ch.run(async (c) => {
          const r = await c.exec({
            query: `INSERT INTO ${database}.${ident(t.name)} (${t.columns.map(ident).join(', ')}) FORMAT Native`,
            values: createReadStream(path.join(dir, t.file)),
            clickhouse_settings: { insert_distributed_sync: 1 },
          });
          r.stream.resume();
          await new Promise<void>((resolve, reject) => r.stream.on('end', resolve).on('error', reject));
        });
      }
    } finally {
      for (const v of views) await ddl(`ATTACH TABLE ${database}.${ident(v)}`);
    }
    const out: { table: string; rows: number }[] = [];
    for (const t of tables) {
      const [r] = await rowsOf<{ n: string }>(ch, `SELECT count() AS n FROM ${database}.${ident(t.name)}`);
      out.push({ table: t.name, rows: Number(r?.n ?? 0) });
    }
    return out;
  } finally {
    await ch.close();
  }
}
