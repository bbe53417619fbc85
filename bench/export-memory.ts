/**
 * The memory of a large usage export (docs/exports.md "Bounded memory", docs/benchmarks.md "Exports"): in a world of
 * its own, N usage records of one customer spread over October 2026 go straight into ClickHouse (INSERT … SELECT
 * from numbers(): the export is measured, not the ingest), then `meterline exports run` writes them as one export
 * in its own process; its peak RSS (`max_rss_bytes`) against a run of 1,000 records shows what the size adds.
 * `node dist/bench/export-memory.js [--records N] [--format csv|parquet]`; prints one JSON document.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createIsolatedWorld } from '../infra/isolated-world.js';
import { createClickhouse } from '../shared/clients/clickhouse.js';
import { createPgPool } from '../shared/clients/postgres.js';
import { parseConfig } from '../shared/config.js';
import { migrateAll } from '../services/migrate.js';
import { repoPath } from '../shared/paths.js';
import { insertExport } from '../services/domain/exports/store.js';
import { stackStatus } from '../infra/stack/stack.js';
import { REPO_ROOT } from '../shared/paths.js';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '1000000' }, format: { type: 'string', default: 'csv' } },
});
const FROM = Date.UTC(2026, 9, 1);
const TO = Date.UTC(2026, 10, 1);

async function exportOnce(env: NodeJS.ProcessEnv, records: number, format: 'csv' | 'parquet') {
  const name = `exportmem_${randomBytes(4).toString('hex')}`;
  const world = await createIsolatedWorld(
    { DATABASE_URL: env.DATABASE_URL!, NATS_URL: env.NATS_URL!, CLICKHOUSE_URL: env.CLICKHOUSE_URL! },
    name,
  );
  const root = await mkdtemp(path.join(tmpdir(), 'meterline-export-memory-'));
  const worldEnv = { ...env, ...world.env, EXPORTS_LOCAL_ROOT: root, LOG_LEVEL: 'warn', NODE_NO_WARNINGS: '1' };
  const config = parseConfig(worldEnv);
  await migrateAll(config);
  const pg = createPgPool(config.DATABASE_URL, 2);
  const ch = createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  try {
    await pg.query(`INSERT INTO accounts (id, customer_id, name) VALUES ('acct_bench', 'cus_bench', 'Bench')`);
    const step = Math.max(1, Math.floor((TO - FROM) / records));
    await ch.command({
      query: `INSERT INTO ${config.CLICKHOUSE_DATABASE}.usage_records
          (account_id, meter_id, ts_ms, record_id, value, received_ms, dim_keys, dim_values)
        SELECT 'acct_bench', 'mtr_bench', ${FROM} + number * ${step}, concat('r', toString(number)),
          toDecimal128(number % 1000, 9), ${FROM} + number * ${step}, ['region'], [concat('r', toString(number % 7))]
        FROM system.numbers LIMIT ${records}`,
    });
    const exp = await insertExport(pg, 'acct_bench', {
      kind: 'usage',
      format,
      from: new Date(FROM),
      to: new Date(TO),
      destination: { type: 'local', path: 'bench' },
    });
    const t0 = performance.now();
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [repoPath('bin/meterline.js'), 'exports', 'run'], {
        env: worldEnv,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`exports run exited ${code}`))));
    });
    const seconds = (performance.now() - t0) / 1000;
    const run = JSON.parse(out) as { completed: string[]; max_rss_bytes: number };
    const { rows } = await pg.query('SELECT row_count, byte_count FROM exports WHERE id = $1', [exp.id]);
    return {
      records,
      format,
      exported_rows: Number(rows[0]?.row_count),
      bytes: Number(rows[0]?.byte_count),
      seconds: Math.round(seconds * 10) / 10,
      max_rss_mib: Math.round((run.max_rss_bytes / 2 ** 20) * 10) / 10,
    };
  } finally {
    await Promise.allSettled([pg.end(), ch.close()]);
    await rm(root, { recursive: true, force: true });
    await world.drop();
  }
}

async function main(): Promise<void> {
  // The stack's owner URLs, as `npm test` passes them: a world of its own needs CREATE DATABASE.
  const stack = await stackStatus({ root: REPO_ROOT, env: process.env });
  const env = {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    NATS_URL: stack.natsUrl,
    CLICKHOUSE_URL: stack.clickhouseUrl,
    SECRET_KEY: process.env.SECRET_KEY || randomBytes(32).toString('hex'),
  };
  const format = values.format === 'parquet' ? 'parquet' : 'csv';
  const small = await exportOnce(env, 1000, format);
  const large = await exportOnce(env, Number(values.records), format);
  process.stdout.write(`${JSON.stringify({ small, large }, null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
