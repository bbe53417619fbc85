/**
 * `billing-run` phase (issue 8, DESIGN §11: a run closing 10,000 subscriptions, half metered — invoices
 * written, charged, events emitted — at ≥ 1,000 invoices/s).
 *
 * Set-up in the bench world (fast, not measured): `accounts` accounts with a default card each (sandbox
 * token that charges), `subscriptions` subscriptions spread over them and created last month, half of them
 * with a metered item on a meter of their own, and `recordsPerMeter` usage records per meter of last month
 * inserted straight into ClickHouse. Then ONE billing run at now, in this process (the engine the billing role
 * and `meterline billing run` use): every period closes, every invoice is charged. Printed: invoices/s over
 * the whole run, and where the time went (ClickHouse, piscina, Postgres, the processor's ledger).
 */
import { randomBytes } from 'node:crypto';
import type { BenchWorld } from '../world.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { createLogger } from '../../shared/logging.js';
import { newId } from '../../shared/ids.js';
import { USAGE_TABLE } from '../../shared/usage/wire.js';
import { billingDeps } from '../../services/billing/deps.js';
import { runBilling } from '../../services/billing/run.js';
import type { BillingTimings } from '../../services/billing/deps.js';

export interface BillingRunResult {
  subscriptions: number;
  metered: number;
  accounts: number;
  usage_records: number;
  invoices: number;
  paid: number;
  events: number;
  seconds: number;
  invoices_per_s: number;
  /** Milliseconds summed per store over the run (ClickHouse, piscina, Postgres, processor calls). */
  timings: BillingTimings;
  close_s: number;
  goal_met: boolean;
}

/** DESIGN §11. */
export const BILLING_GOAL_INVOICES_PER_S = 1000;

export async function runBillingPhase(opts: { world: BenchWorld; log: (m: string) => void; subscriptions: number; accounts: number; recordsPerMeter: number }): Promise<BillingRunResult> {
  const { world, log } = opts;
  const config = world.config;
  const pg = createPgPool(config.DATABASE_URL, 6);
  const ch = createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  try {
    const now = new Date();
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
    const thisMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const t0 = performance.now();
    const accounts = Array.from({ length: opts.accounts }, () => ({ id: newId('acct'), customer: newId('cus') }));
    await pg.query(`INSERT INTO accounts (id, customer_id, name) SELECT a, c, 'bench billing' FROM unnest($1::text[], $2::text[]) AS u(a, c)`, [accounts.map((a) => a.id), accounts.map((a) => a.customer)]);
    await pg.query(
      `INSERT INTO payment_methods (id, account_id, type, brand, last4, exp_month, exp_year, fingerprint, processor, processor_token, is_default)
       SELECT p, a, 'card', 'visa', '4242', 12, 2099, 'bench', 'sandbox', t, true FROM unnest($1::text[], $2::text[], $3::text[]) AS u(p, a, t)`,
      [accounts.map(() => newId('pm')), accounts.map((a) => a.id), accounts.map(() => `sandbox_tok_ok_${randomBytes(9).toString('base64url')}`)],
    );
    const flat = newId('prod');
    const metered = newId('prod');
    await pg.query(`INSERT INTO products (id, name, price, currency, pricing) VALUES ($1, 'Bench plan', 10, 'USD', 'flat'), ($2, 'Bench calls', 0.000123, 'USD', 'metered')`, [flat, metered]);
    const subs = Array.from({ length: opts.subscriptions }, (_, i) => ({ id: newId('sub'), account: accounts[i % accounts.length]!.id, meter: i % 2 === 0 ? newId('mtr') : null }));
    const withMeter = subs.filter((s) => s.meter);
    await pg.query(
      `INSERT INTO meters (id, account_id, name, unit, type, aggregation, status, created_at, updated_at)
       SELECT m, a, 'bench calls', 'calls', 'counter', 'sum', 'active', $3, $3 FROM unnest($1::text[], $2::text[]) AS u(m, a)`,
      [withMeter.map((s) => s.meter), withMeter.map((s) => s.account), new Date(lastMonth)],
    );
    await pg.query(`INSERT INTO subscriptions (id, account_id, status, currency, created_at) SELECT s, a, 'active', 'USD', $3 FROM unnest($1::text[], $2::text[]) AS u(s, a)`, [
      subs.map((s) => s.id),
      subs.map((s) => s.account),
      new Date(lastMonth + 3_600_000),
    ]);
    await pg.query(
      `INSERT INTO subscription_items (subscription_id, position, product_id, meter_id)
       SELECT s, 0, $2, NULL FROM unnest($1::text[]) AS u(s)
       UNION ALL SELECT s, 1, $3, m FROM unnest($4::text[], $5::text[]) AS v(s, m)`,
      [subs.map((s) => s.id), flat, metered, withMeter.map((s) => s.id), withMeter.map((s) => s.meter)],
    );
    // Usage of last month, straight into the world's table (the ingest path is measured by other phases).
    const span = thisMonth - lastMonth;
    let rows = '';
    let records = 0;
    for (const s of withMeter) {
      for (let k = 0; k < opts.recordsPerMeter; k++) {
        rows += `${JSON.stringify({ account_id: s.account, meter_id: s.meter, ts_ms: lastMonth + Math.floor(((k + 0.5) / opts.recordsPerMeter) * span), record_id: `r${k}`, value: (k % 50) + 1, received_ms: lastMonth })}\n`;
        records++;
      }
      if (rows.length > 8_000_000) {
        await ch.command({ query: `INSERT INTO ${config.CLICKHOUSE_DATABASE}.${USAGE_TABLE} FORMAT JSONEachRow\n${rows}` });
        rows = '';
      }
    }
    if (rows) await ch.command({ query: `INSERT INTO ${config.CLICKHOUSE_DATABASE}.${USAGE_TABLE} FORMAT JSONEachRow\n${rows}` });
    log(`billing-run: set up ${subs.length} subscriptions (${withMeter.length} metered, ${accounts.length} accounts, ${records} usage records) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const deps = billingDeps({ pg, clickhouse: ch, config, log: createLogger({ level: 'warn', name: 'bench-billing' }) });
    try {
      const started = performance.now();
      let closedAt = started;
      const r = await runBilling(deps, now, { closing: (done, total) => ((closedAt = performance.now()), done === total && log(`billing-run: closed ${done} of ${total}`)) });
      const seconds = (performance.now() - started) / 1000;
      const counts = (
        await pg.query<{ invoices: number; paid: number; events: number }>(
          `SELECT (SELECT count(*)::int FROM invoices) AS invoices, (SELECT count(*)::int FROM invoices WHERE status = 'paid') AS paid,
                  (SELECT count(*)::int FROM outbox_events WHERE type IN ('invoice.created', 'invoice.paid')) AS events`,
        )
      ).rows[0]!;
      const timings = Object.fromEntries(Object.entries(r.timings).map(([k, v]) => [k, Math.round(v)])) as unknown as BillingTimings;
      const result: BillingRunResult = {
        subscriptions: subs.length,
        metered: withMeter.length,
        accounts: accounts.length,
        usage_records: records,
        ...counts,
        seconds: Math.round(seconds * 100) / 100,
        invoices_per_s: Math.round(r.invoices.length / seconds),
        timings,
        close_s: Math.round((closedAt - started) / 10) / 100,
        goal_met: r.invoices.length / seconds >= BILLING_GOAL_INVOICES_PER_S,
      };
      log(`billing-run: ${JSON.stringify(result)}`);
      return result;
    } finally {
      await deps.linesPool.destroy();
    }
  } finally {
    await Promise.allSettled([pg.end(), ch.close()]);
  }
}

/** The report's lines for this phase. */
export function billingRunLines(r: BillingRunResult): string[] {
  const t = r.timings;
  return [
    `billing-run: ${r.invoices} invoices (${r.paid} paid, ${r.events} invoice events) for ${r.subscriptions} subscriptions (${r.metered} metered, ${r.usage_records} usage records) in ${r.seconds} s → ${r.invoices_per_s} invoices/s (goal ≥ ${BILLING_GOAL_INVOICES_PER_S}: ${r.goal_met ? 'met' : 'NOT met'}); period close ${r.close_s} s`,
    `billing-run time by store: ClickHouse ${t.clickhouse_ms} ms, piscina ${t.piscina_ms} ms, Postgres ${t.postgres_ms} ms, processor (sandbox ledger) ${t.processor_ms} ms`,
  ];
}
