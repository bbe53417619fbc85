import { parseConfig } from '../../shared/config.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { parseTimestamp } from '../../shared/usage/timestamp.js';
import { addScheduledExports, runDueExports } from '../domain/exports/run.js';
import { EXPORT_SETTLE_MS } from '../domain/exports/schedules.js';
import { stackEnv } from './env.js';
import { EXIT, parseFlags, UsageError } from './output.js';

/**
 * `meterline exports run [--now ISO] [--page-rows N]` → `{added, completed, failed, max_rss_bytes}`: adds the
 * schedules' windows that ended by then and writes every export due, once — what the billing role does every
 * few seconds (docs/exports.md). `--page-rows` sets the rows read and written per page (memory against speed).
 */
export async function exportsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'run') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const flags = parseFlags(rest, { strings: ['now', 'page-rows'] });
  let now = new Date();
  if (typeof flags.now === 'string') {
    const ms = parseTimestamp(flags.now);
    if (ms === undefined)
      throw new UsageError(`--now must be an RFC 3339 date-time with an offset, got "${flags.now}"`);
    now = new Date(ms);
  }
  let pageRows: number | undefined;
  if (typeof flags['page-rows'] === 'string') {
    pageRows = Number(flags['page-rows']);
    if (!Number.isInteger(pageRows) || pageRows < 1 || pageRows > 1_000_000)
      throw new UsageError(`--page-rows must be a whole number from 1 to 1000000, got "${flags['page-rows']}"`);
  }
  const config = parseConfig(await stackEnv({ launch: false }));
  const pg = createPgPool(config.DATABASE_URL, 2);
  const clickhouse = createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  try {
    const added = await addScheduledExports(pg, now, EXPORT_SETTLE_MS);
    const failed: string[] = [];
    const completed = await runDueExports({
      pg,
      clickhouse,
      database: config.CLICKHOUSE_DATABASE,
      config,
      pageRows,
      failed: (id, err) => {
        failed.push(id);
        process.stderr.write(`exports: ${id} failed: ${(err as Error).message}\n`);
      },
    });
    process.stdout.write(
      `${JSON.stringify({
        added,
        completed: completed.map((e) => e.id),
        failed,
        max_rss_bytes: process.resourceUsage().maxRSS * 1024,
      })}\n`,
    );
    return failed.length ? EXIT.failure : EXIT.ok;
  } finally {
    await Promise.allSettled([pg.end(), clickhouse.close()]);
  }
}
