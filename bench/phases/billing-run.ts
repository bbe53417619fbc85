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
 *
 * `mix` (issue 17): the metered half spread over every price model — metered, graduated and volume tiers,
 * package — an eighth of the items with a minimum commitment, a fifth of the accounts with prepaid credit, and
 * late usage: the subscriptions start the month before last, a first run (not measured) closes that month,
 * then late records for it arrive for a quarter of the metered subscriptions, so the measured run also
 * re-prices those periods and bills adjustment lines. Coupons (issue 29): a 25 % forever coupon on every third
 * subscription, so a third of the invoices carry discount lines (and their late usage a discount of its own).
 *
 * `periods` (issue 29): the subscriptions spread over billing terms — calendar months, anniversary months (created on
 * days 1–28 of last month), ISO weeks, calendar years (the year's flat item billed in advance, the usage monthly),
 * anniversary quarters and 14-day trials, and the 25 % coupon on every third — so the measured run closes weekly and mid-month periods, issues advance
 * invoices and trial notices beside the plain monthly closes.
 */
import { randomBytes } from 'node:crypto';
import type { BenchWorld } from '../world.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { createLogger } from '../../shared/logging.js';
import { newId } from '../../shared/ids.js';
import { USAGE_TABLE } from '../../shared/usage/wire.js';
import { recomputeHours, type HourKeys } from '../../services/domain/usage/rollups-store.js';
import { billingDeps } from '../../services/workers/billing-deps.js';
import { runBilling } from '../../services/domain/billing/run.js';
import type { BillingTimings } from '../../services/domain/billing/deps.js';
import { billingStart } from '../../services/domain/subscriptions/periods.js';
import type { SubscriptionTerms } from '../../services/domain/subscriptions/types.js';

export interface BillingRunResult {
  mix: boolean;
  /** Mixed intervals, anchors and trials (issue 29). */
  periods?: boolean;
  /** periods: advance invoices and trial notices of the measured run. */
  advance_invoices?: number;
  trial_notices?: number;
  subscriptions: number;
  metered: number;
  accounts: number;
  usage_records: number;
  invoices: number;
  paid: number;
  events: number;
  /** mix: lines of those kinds on the measured run's invoices. */
  credit_lines?: number;
  adjustment_lines?: number;
  minimum_lines?: number;
  discount_lines?: number;
  seconds: number;
  invoices_per_s: number;
  /** Milliseconds summed per store over the run (ClickHouse, piscina, Postgres, processor calls). */
  timings: BillingTimings;
  close_s: number;
  goal_met: boolean;
}

/** DESIGN §11. */
export const BILLING_GOAL_INVOICES_PER_S = 1000;

export async function runBillingPhase(opts: {
  world: BenchWorld;
  log: (m: string) => void;
  subscriptions: number;
  accounts: number;
  recordsPerMeter: number;
  mix?: boolean;
  periods?: boolean;
}): Promise<BillingRunResult> {
  const { world } = opts;
  const mix = opts.mix ?? false;
  const periods = opts.periods ?? false;
  const phase = periods ? 'billing-run (periods)' : mix ? 'billing-run (mix)' : 'billing-run';
  const log = (m: string) => opts.log(m.replace(/^billing-run/, phase));
  const config = world.config;
  const pg = createPgPool(config.DATABASE_URL, 6);
  const ch = createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE);
  try {
    const now = new Date();
    const lastMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
    const thisMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const monthBefore = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1);
    const firstMonth = mix ? monthBefore : lastMonth;
    const t0 = performance.now();
    const accounts = Array.from({ length: opts.accounts }, () => ({ id: newId('acct'), customer: newId('cus') }));
    await pg.query(
      `INSERT INTO accounts (id, customer_id, name) SELECT a, c, 'bench billing' FROM unnest($1::text[], $2::text[]) AS u(a, c)`,
      [accounts.map((a) => a.id), accounts.map((a) => a.customer)],
    );
    await pg.query(
      `INSERT INTO payment_methods (id, account_id, type, brand, last4, exp_month, exp_year, fingerprint, processor, processor_token, is_default)
       SELECT p, a, 'card', 'visa', '4242', 12, 2099, 'bench', 'sandbox', t, true FROM unnest($1::text[], $2::text[], $3::text[]) AS u(p, a, t)`,
      [
        accounts.map(() => newId('pm')),
        accounts.map((a) => a.id),
        accounts.map(() => `sandbox_tok_ok_${randomBytes(9).toString('base64url')}`),
      ],
    );
    const flat = newId('prod');
    const metered = newId('prod');
    await pg.query(
      `INSERT INTO products (id, name, price, currency, pricing) VALUES ($1, 'Bench plan', 10, 'USD', 'flat'), ($2, 'Bench calls', 0.000123, 'USD', 'metered')`,
      [flat, metered],
    );
    const usageProducts = mix ? [metered, ...(await mixProducts(pg))] : [metered];
    const subs = Array.from({ length: opts.subscriptions }, (_, i) => ({
      id: newId('sub'),
      account: accounts[i % accounts.length]!.id,
      meter: i % 2 === 0 ? newId('mtr') : null,
      product: usageProducts[(i / 2) % usageProducts.length]!,
      minimum: mix && i % 8 === 0 ? '5' : null,
    }));
    const withMeter = subs.filter((s) => s.meter);
    await pg.query(
      `INSERT INTO meters (id, account_id, name, unit, type, aggregation, status, created_at, updated_at)
       SELECT m, a, 'bench calls', 'calls', 'counter', 'sum', 'active', $3, $3 FROM unnest($1::text[], $2::text[]) AS u(m, a)`,
      [withMeter.map((s) => s.meter), withMeter.map((s) => s.account), new Date(firstMonth)],
    );
    if (periods) await insertPeriodSubscriptions(pg, subs, firstMonth);
    else
      await pg.query(
        `INSERT INTO subscriptions (id, account_id, status, currency, created_at) SELECT s, a, 'active', 'USD', $3 FROM unnest($1::text[], $2::text[]) AS u(s, a)`,
        [subs.map((s) => s.id), subs.map((s) => s.account), new Date(firstMonth + 3_600_000)],
      );
    await pg.query(
      `INSERT INTO subscription_items (subscription_id, position, product_id, meter_id, minimum_amount)
       SELECT s, 0, $2, NULL, NULL FROM unnest($1::text[]) AS u(s)
       UNION ALL SELECT s, 1, p, m, x FROM unnest($3::text[], $4::text[], $5::text[], $6::numeric[]) AS v(s, m, p, x)`,
      [
        subs.map((s) => s.id),
        flat,
        withMeter.map((s) => s.id),
        withMeter.map((s) => s.meter),
        withMeter.map((s) => s.product),
        withMeter.map((s) => s.minimum),
      ],
    );
    if (mix) {
      // Prepaid credit for every fifth account: 200 USD, expiring in a year (about two months of its invoices).
      const credited = accounts.filter((_, i) => i % 5 === 0);
      await pg.query(
        `INSERT INTO credit_grants (id, account_id, currency, amount, remaining, expires_at, description)
         SELECT g, a, 'USD', 200, 200, now() + interval '1 year', 'bench credit' FROM unnest($1::text[], $2::text[]) AS u(g, a)`,
        [credited.map(() => newId('cred')), credited.map((a) => a.id)],
      );
    }
    if (mix || periods) {
      // Coupons (issue 29): a 25 % forever coupon on every third subscription, from the first month on — each of
      // their invoices gets discount lines, and their late usage a discount of its own.
      const discounted = subs.filter((_, i) => i % 3 === 0);
      const coupon = newId('coupon');
      await pg.query(
        `INSERT INTO coupons (id, name, percent_off, duration, times_redeemed) VALUES ($1, 'BENCH25', 25, 'forever', $2)`,
        [coupon, discounted.length],
      );
      await pg.query(
        `INSERT INTO coupon_redemptions (coupon_id, subscription_id, account_id, first_period_start, redeemed_at)
         SELECT $1, s, a, $4, $4 FROM unnest($2::text[], $3::text[]) AS u(s, a)`,
        [coupon, discounted.map((s) => s.id), discounted.map((s) => s.account), new Date(firstMonth)],
      );
    }
    // Usage straight into the world's table (the ingest path is measured by other phases).
    let records = 0;
    const insertUsage = async (
      meters: typeof withMeter,
      from: number,
      to: number,
      prefix: string,
      perMeter: number,
    ): Promise<HourKeys[]> => {
      let rows = '';
      const touched: HourKeys[] = [];
      for (const s of meters) {
        const hours = new Set<number>();
        for (let k = 0; k < perMeter; k++) {
          const ts = from + Math.floor(((k + 0.5) / perMeter) * (to - from));
          hours.add(Math.floor(ts / 3_600_000));
          rows += `${JSON.stringify({ account_id: s.account, meter_id: s.meter, ts_ms: ts, record_id: `${prefix}${k}`, value: (k % 50) + 1, received_ms: from })}\n`;
          records++;
        }
        touched.push({ accountId: s.account, meterId: s.meter!, hours });
        if (rows.length > 8_000_000) {
          await ch.command({
            query: `INSERT INTO ${config.CLICKHOUSE_DATABASE}.${USAGE_TABLE} FORMAT JSONEachRow\n${rows}`,
          });
          rows = '';
        }
      }
      if (rows)
        await ch.command({
          query: `INSERT INTO ${config.CLICKHOUSE_DATABASE}.${USAGE_TABLE} FORMAT JSONEachRow\n${rows}`,
        });
      return touched;
    };
    await insertUsage(withMeter, firstMonth, thisMonth, 'r', opts.recordsPerMeter * (mix ? 2 : 1));
    const deps = billingDeps({
      pg,
      clickhouse: ch,
      config,
      log: createLogger({ level: 'warn', name: 'bench-billing' }),
    });
    if (mix) {
      // The month before last is invoiced first (not measured); then late records of it arrive.
      const first = await runBilling(deps, new Date(lastMonth + (config.BILLING_GRACE_SECONDS + 60) * 1000));
      log(`billing-run: month before last closed first (${first.invoices.length} invoices, not measured)`);
      const late = await insertUsage(
        withMeter.filter((_, i) => i % 4 === 0),
        monthBefore,
        lastMonth,
        'late',
        5,
      );
      // What the consumer does for records of hours already rolled up: recompute those hours.
      await recomputeHours(ch, config.CLICKHOUSE_DATABASE, late);
    }
    // The tables were bulk-loaded a moment ago: give the planner the statistics autovacuum would have gathered
    // by the time a real month's billing runs (without them it plans the close's joins for empty tables).
    await pg.query(
      'ANALYZE subscriptions, subscription_items, invoices, invoice_lines, credit_grants, payment_methods, meters, accounts',
    );
    log(
      `billing-run: set up ${subs.length} subscriptions (${withMeter.length} metered, ${accounts.length} accounts, ${records} usage records) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    try {
      const startedAt = new Date();
      const started = performance.now();
      let closedAt = started;
      const r = await runBilling(deps, now, {
        closing: (done, total) => (
          (closedAt = performance.now()), done === total && log(`billing-run: closed ${done} of ${total}`)
        ),
      });
      const seconds = (performance.now() - started) / 1000;
      const counts = (
        await pg.query<{
          invoices: number;
          paid: number;
          events: number;
          credit_lines: number;
          adjustment_lines: number;
          minimum_lines: number;
          discount_lines: number;
        }>(
          // periods: every invoice the measured run wrote (weekly and mid-month periods, advance invoices).
          `WITH mine AS (SELECT id, status FROM invoices WHERE account_id = ANY($1) AND CASE WHEN $4 THEN created_at = $5 ELSE period_start = $2::date END)
           SELECT (SELECT count(*)::int FROM mine) AS invoices, (SELECT count(*)::int FROM mine WHERE status = 'paid') AS paid,
                  (SELECT count(*)::int FROM outbox_events WHERE account_id = ANY($1) AND created_at >= $3 AND type IN ('invoice.created', 'invoice.paid')) AS events,
                  (SELECT count(*)::int FROM invoice_lines WHERE invoice_id IN (SELECT id FROM mine) AND type = 'credit') AS credit_lines,
                  (SELECT count(*)::int FROM invoice_lines WHERE invoice_id IN (SELECT id FROM mine) AND type = 'adjustment') AS adjustment_lines,
                  (SELECT count(*)::int FROM invoice_lines WHERE invoice_id IN (SELECT id FROM mine) AND type = 'minimum_commitment') AS minimum_lines,
                  (SELECT count(*)::int FROM invoice_lines WHERE invoice_id IN (SELECT id FROM mine) AND type = 'discount') AS discount_lines`,
          [accounts.map((a) => a.id), new Date(lastMonth).toISOString().slice(0, 10), startedAt, periods, now],
        )
      ).rows[0]!;
      const extra = periods
        ? (
            await pg.query<{ advance_invoices: number; trial_notices: number }>(
              `SELECT (SELECT count(*)::int FROM invoices WHERE account_id = ANY($1) AND created_at = $2 AND reason = 'advance') AS advance_invoices,
                      (SELECT count(*)::int FROM outbox_events WHERE account_id = ANY($1) AND created_at >= $3 AND type = 'subscription.trial_will_end') AS trial_notices`,
              [accounts.map((a) => a.id), now, startedAt],
            )
          ).rows[0]!
        : {};
      const { credit_lines, adjustment_lines, minimum_lines, discount_lines, ...base } = counts;
      const timings = Object.fromEntries(
        Object.entries(r.timings).map(([k, v]) => [k, Math.round(v)]),
      ) as unknown as BillingTimings;
      const result: BillingRunResult = {
        mix,
        ...(periods ? { periods, ...extra } : {}),
        subscriptions: subs.length,
        metered: withMeter.length,
        accounts: accounts.length,
        usage_records: records,
        ...base,
        ...(mix ? { credit_lines, adjustment_lines, minimum_lines } : {}),
        ...(mix || periods ? { discount_lines } : {}),
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

/**
 * periods: one subscription in six on each of calendar months, anniversary months, ISO weeks, calendar years,
 * anniversary quarters and calendar months after a 14-day trial; the anniversaries created on days 1–28 of the first
 * month. Their period columns as POST /v1/subscriptions writes them (billingStart).
 */
async function insertPeriodSubscriptions(
  pg: ReturnType<typeof createPgPool>,
  subs: { id: string; account: string }[],
  firstMonth: number,
): Promise<void> {
  const kinds: SubscriptionTerms[] = [
    {},
    { billing_anchor: 'start' },
    { interval: 'week' },
    { interval: 'year' },
    { interval: 'quarter', billing_anchor: 'start' },
    { trial_days: 14 },
  ];
  const rows = subs.map((s, i) => {
    const createdAt = new Date(firstMonth + 3_600_000 + (i % 28) * 86_400_000);
    const start = billingStart(kinds[i % kinds.length]!, createdAt);
    return { ...s, createdAt, ...start };
  });
  await pg.query(
    `INSERT INTO subscriptions (id, account_id, status, currency, created_at, "interval", interval_count, billing_anchor, trial_end,
                                billing_period_start, billing_period_end, advance_period_start, advance_period_end)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::int[], $8::text[],
                          $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::timestamptz[])`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.account),
      rows.map(() => 'active'),
      rows.map(() => 'USD'),
      rows.map((r) => r.createdAt),
      rows.map((r) => r.terms.interval),
      rows.map((r) => r.terms.interval_count),
      rows.map((r) => r.terms.billing_anchor),
      rows.map((r) => r.trialEnd),
      rows.map((r) => r.usage.start),
      rows.map((r) => r.usage.end),
      rows.map((r) => r.advance?.start ?? null),
      rows.map((r) => r.advance?.end ?? null),
    ],
  );
}

/** The mix's price models (besides the plain metered one): graduated and volume tiers, and packages. */
async function mixProducts(pg: ReturnType<typeof createPgPool>): Promise<string[]> {
  const ids = [newId('prod'), newId('prod'), newId('prod')];
  const tiers = JSON.stringify([
    { up_to: '100', unit_price: '0.01', flat_price: '0' },
    { up_to: '400', unit_price: '0.005', flat_price: '1' },
    { up_to: null, unit_price: '0.001', flat_price: '0' },
  ]);
  await pg.query(
    `INSERT INTO products (id, name, price, currency, pricing, tiers_mode, tiers, package_size) VALUES
       ($1, 'Bench graduated', 0, 'USD', 'tiered', 'graduated', $4::jsonb, NULL),
       ($2, 'Bench volume', 0, 'USD', 'tiered', 'volume', $4::jsonb, NULL),
       ($3, 'Bench packages', 2.5, 'USD', 'package', NULL, NULL, 100)`,
    [...ids, tiers],
  );
  return ids;
}

/** The report's lines for this phase. */
export function billingRunLines(r: BillingRunResult): string[] {
  const t = r.timings;
  const name = r.periods ? 'billing-run (periods)' : r.mix ? 'billing-run (mix)' : 'billing-run';
  const mixed = r.mix
    ? `; mix of every price model: ${r.minimum_lines} minimum true-ups, ${r.credit_lines} credit lines, ${r.adjustment_lines} late-usage adjustments, ${r.discount_lines} discount lines`
    : '';
  const terms = r.periods
    ? `; mixed terms (calendar and anniversary months, ISO weeks, years, anniversary quarters, 14-day trials): ${r.advance_invoices} advance invoices, ${r.trial_notices} trial notices`
    : '';
  return [
    `${name}: ${r.invoices} invoices (${r.paid} paid, ${r.events} invoice events) for ${r.subscriptions} subscriptions (${r.metered} metered, ${r.usage_records} usage records) in ${r.seconds} s → ${r.invoices_per_s} invoices/s (goal ≥ ${BILLING_GOAL_INVOICES_PER_S}: ${r.goal_met ? 'met' : 'NOT met'}); period close ${r.close_s} s${mixed}${terms}`,
    `${name} time by store: ClickHouse ${t.clickhouse_ms} ms, piscina ${t.piscina_ms} ms, Postgres ${t.postgres_ms} ms, processor (sandbox ledger) ${t.processor_ms} ms`,
  ];
}
