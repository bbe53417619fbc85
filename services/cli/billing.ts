import { parseConfig } from '../../shared/config.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { createLogger } from '../../shared/logging.js';
import { parseTimestamp } from '../../shared/usage/timestamp.js';
import { billingDeps } from '../workers/billing-deps.js';
import { runBilling } from '../domain/billing/run.js';
import { nextPeriodDue } from '../domain/billing/close.js';
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
    const idle = r.invoices.length === 0 ? await whyNothingClosed(deps, now) : {};
    if ('reason' in idle) say(`no invoice: ${idle.reason}`);
    // Amounts as exact JSON numbers, like the API writes them.
    process.stdout.write(
      stringifyJson({
        invoices: r.invoices.map((i) => ({ ...i, amount: new JsonDecimal(i.amount) })),
        payments: r.payments,
        ...idle,
      }) + '\n',
    );
    return EXIT.ok;
  } finally {
    await Promise.allSettled([deps.linesPool.destroy(), pg.end(), clickhouse.close()]);
  }
}

/** A run that closed nothing says why, and when the next period becomes due (its end + the grace period). */
async function whyNothingClosed(
  deps: Parameters<typeof nextPeriodDue>[0],
  now: Date,
): Promise<{ reason: string; next_due_at: string | null }> {
  const next = await nextPeriodDue(deps);
  if (!next) return { reason: 'no subscription has a period left to close', next_due_at: null };
  const reason =
    next.dueAt > now
      ? `no period is due at ${now.toISOString()}: the next one ends ${next.periodEnd.toISOString()} and closes at ${next.dueAt.toISOString()}, after the ${deps.graceSeconds} s grace period (BILLING_GRACE_SECONDS) that lets late usage count`
      : 'the periods due were being closed by another billing run';
  return { reason, next_due_at: next.dueAt.toISOString() };
}
