import { parseConfig } from '../../shared/config.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { createLogger } from '../../shared/logging.js';
import { parseTimestamp } from '../../shared/usage/timestamp.js';
import { billingDeps } from '../roles/billing/deps.js';
import { runBilling } from '../domain/billing/run.js';
import { stackEnv } from './env.js';
import { stringifyJson, JsonDecimal } from '../../shared/money/json.js';
import { EXIT, parseFlags, UsageError } from './output.js';

/**
 * `meterline billing run [--now ISO]` → `{invoices: [...], payments: [...]}`: closes every period due at that
 * instant (default: now) and makes the payment attempts due then, once — what the billing role does every
 * BILLING_INTERVAL_SECONDS. Progress ("closed n of N periods") goes to stderr.
 */
export async function billingCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'run') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
  const flags = parseFlags(rest, { strings: ['now'] });
  let now = new Date();
  if (typeof flags.now === 'string') {
    const ms = parseTimestamp(flags.now);
    if (ms === undefined)
      throw new UsageError(
        `--now must be an RFC 3339 date-time with an offset (2026-12-01T01:00:00Z), got "${flags.now}"`,
      );
    now = new Date(ms);
  }
  const config = parseConfig(await stackEnv({ launch: false }));
  const log = createLogger({ level: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, name: 'billing-run' });
  const pg = createPgPool(config.DATABASE_URL, 4);
  const clickhouse = createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  const deps = billingDeps({ pg, clickhouse, config, log });
  const say = (m: string) => process.stderr.write(`billing: ${m}\n`);
  try {
    const r = await runBilling(deps, now, {
      closing: (done, total) => say(`closed ${done} of ${total} periods`),
      paying: (done) => say(`${done} payment attempts`),
    });
    // Amounts as exact JSON numbers, like the API writes them.
    process.stdout.write(
      stringifyJson({
        invoices: r.invoices.map((i) => ({ ...i, amount: new JsonDecimal(i.amount) })),
        payments: r.payments,
      }) + '\n',
    );
    return EXIT.ok;
  } finally {
    await Promise.allSettled([deps.linesPool.destroy(), pg.end(), clickhouse.close()]);
  }
}
