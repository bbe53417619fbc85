import { withTransaction, type PgClient, type PgPool } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import { appendEvents } from '../events/outbox-store.js';
import { sumOfLines, type LineTax, type PricedInvoice, type PricedLine } from '../pricing/invoice-lines.js';
import { TAX_PROFILE_COLUMNS, taxInvoices } from '../tax/invoice-tax.js';
import type { TaxProfile } from '../tax/types.js';
import { insertInvoiceLines, issuedEvents, type ClosedInvoice } from './close.js';
import { lockAndAllocateCredits, recordCreditUses } from './credits.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { firstPaymentAttemptAt } from './dunning.js';
import { numberDocuments, PRINTED_NUMBER_SQL } from './numbering.js';
import { monthStart, nextMonthStart } from './periods.js';
import { pricePeriods } from './price-periods.js';
import { inScope, LIVE_CUSTOMERS, type BillingScope } from './scope.js';

/**
 * Progressive billing (issue 28, docs/billing.md "Progressive billing"). A subscription with a `billing_threshold`
 * is billed during its period whenever the period's amount due so far — priced exactly as the upcoming invoice:
 * the period's lines up to now, minus what earlier threshold invoices billed, taxed, prepaid credit applied —
 * reaches the threshold: a `threshold` invoice for that amount is issued (numbered, `invoice.created`) and the
 * payment pass charges it at once. The period's final invoice (and every later threshold invoice) holds the
 * period's lines in full and one `deduction` line per threshold invoice already issued, so
 * Σ of the period's invoices = what the period would have billed without a threshold.
 *
 * Exactly once: the pass locks the subscription row (FOR UPDATE SKIP LOCKED, as the period close does — the two
 * never work on one subscription at once), numbers the invoice `threshold_seq` = 1 + the period's threshold
 * invoices so far, and writes invoice, lines, credit, event and number in one transaction; UNIQUE
 * (subscription, period, threshold_seq) is the last line of defence. A kill -9 leaves all of it or none.
 */

/** A period whose invoice deducts its threshold invoices: the subscription and the period's first day. */
export interface PeriodRef {
  subscription_id: string;
  startMs: number;
}

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * What the threshold invoices of each period billed so far (Σ of their amounts; void ones excluded): with the
 * upcoming invoice's amount — which deducts them — the period's whole invoiced amount (spend alerts read it).
 */
export async function thresholdBilled(q: PgPool | PgClient, periods: PeriodRef[]): Promise<Decimal[]> {
  if (periods.length === 0) return [];
  const { rows } = await q.query<{ n: number; billed: string }>(
    `SELECT c.n, COALESCE(sum(i.amount), 0)::text AS billed
       FROM unnest($1::text[], $2::date[]) WITH ORDINALITY AS c(subscription_id, period_start, n)
       LEFT JOIN invoices i ON i.subscription_id = c.subscription_id AND i.period_start = c.period_start
                           AND i.reason = 'threshold' AND i.status NOT IN ('void', 'draft')
      GROUP BY c.n ORDER BY c.n`,
    [periods.map((p) => p.subscription_id), periods.map((p) => isoDate(p.startMs))],
  );
  return rows.map((r) => new Decimal(r.billed));
}

/**
 * THE rule of the deduction: appends to each priced period one `deduction` line per threshold invoice of that
 * period (oldest first) — minus its subtotal, referencing it (`adjusts_invoice_id`), carrying minus the tax it
 * billed at each rate (applyTax takes that tax back: the period's invoices together carry the tax of the whole
 * period). Call it after pricing and before tax; `priced[i]` belongs to `periods[i]`.
 */
export async function deductThresholdInvoices(
  q: PgPool | PgClient,
  periods: PeriodRef[],
  priced: PricedInvoice[],
): Promise<void> {
  if (periods.length === 0) return;
  const billed = await q.query<{ subscription_id: string; id: string; number: string | null; subtotal: string }>(
    `SELECT i.subscription_id, i.id, ${PRINTED_NUMBER_SQL('i')} AS number, i.subtotal::text AS subtotal
       FROM unnest($1::text[], $2::date[]) AS c(subscription_id, period_start)
       JOIN invoices i ON i.subscription_id = c.subscription_id AND i.period_start = c.period_start
                      AND i.reason = 'threshold' AND i.status NOT IN ('void', 'draft')
      ORDER BY i.subscription_id, i.threshold_seq`,
    [periods.map((p) => p.subscription_id), periods.map((p) => isoDate(p.startMs))],
  );
  if (billed.rows.length === 0) return;
  const taxed = await q.query<{ invoice_id: string; amount: string; taxes: LineTax[] }>(
    `SELECT invoice_id, amount::text AS amount, taxes FROM invoice_lines WHERE invoice_id = ANY($1) AND taxes IS NOT NULL`,
    [billed.rows.map((b) => b.id)],
  );
  // Per threshold invoice and rate: the tax it billed and the base it was on.
  const taxOf = new Map<string, Map<string, { tax: Decimal; base: Decimal }>>();
  for (const l of taxed.rows) {
    const rates = taxOf.get(l.invoice_id) ?? new Map<string, { tax: Decimal; base: Decimal }>();
    taxOf.set(l.invoice_id, rates);
    for (const t of l.taxes) {
      const r = rates.get(t.tax_rate_id) ?? { tax: new Decimal(0), base: new Decimal(0) };
      r.tax = r.tax.plus(t.amount);
      r.base = r.base.plus(t.base ?? l.amount);
      rates.set(t.tax_rate_id, r);
    }
  }
  const index = new Map(periods.map((p, i) => [p.subscription_id, i]));
  for (const b of billed.rows) {
    const invoice = priced[index.get(b.subscription_id)!]!;
    const amount = canonicalDecimal(new Decimal(b.subtotal).neg());
    const taxes = [...(taxOf.get(b.id) ?? new Map()).entries()].map(([tax_rate_id, r]) => ({
      tax_rate_id,
      amount: canonicalDecimal(r.tax.neg()),
      base: canonicalDecimal(r.base.neg()),
    }));
    const line: PricedLine = {
      type: 'deduction',
      product_id: null,
      meter_id: null,
      description: `Billed on threshold invoice ${b.number ?? b.id}`,
      quantity: '1',
      unit_price: amount,
      amount,
      price_model: null,
      adjusts_invoice_id: b.id,
      taxes: taxes.length ? taxes : null,
    };
    invoice.lines.push(line);
    invoice.amount = canonicalDecimal(sumOfLines(invoice.lines));
  }
}

/**
 * Never below zero: when corrections lowered a period below what its threshold invoices already billed, its
 * final invoice would be negative. The excess goes back to the customer as a prepaid credit grant (spent on its
 * next invoices), shown on the final invoice as a `credit` line that brings it to 0. Call it after tax and before
 * prepaid credit, in the transaction that writes the invoices; returns the grants to write once they are.
 */
export function excessAsCredit(
  invoices: { invoice_id: string; account_id: string; priced: PricedInvoice; periodStart: string }[],
  opts: { preview?: boolean } = {},
): ExcessGrant[] {
  const grants: ExcessGrant[] = [];
  for (const v of invoices) {
    const total = new Decimal(v.priced.amount);
    if (!total.isNegative() || total.isZero()) continue;
    const excess = canonicalDecimal(total.neg());
    const id = newId('cred');
    v.priced.lines.push({
      type: 'credit',
      product_id: null,
      meter_id: null,
      // The upcoming invoice names no grant: none exists until the period's invoice is issued.
      description: `Billed in excess by threshold invoices: returned as prepaid credit${opts.preview ? '' : ` ${id}`}`,
      quantity: '1',
      unit_price: excess,
      amount: excess,
      price_model: null,
      adjusts_invoice_id: null,
    });
    v.priced.amount = canonicalDecimal(sumOfLines(v.priced.lines));
    grants.push({
      id,
      invoice_id: v.invoice_id,
      account_id: v.account_id,
      currency: v.priced.currency,
      amount: excess,
      description: `Billed in excess by the threshold invoices of the period from ${v.periodStart}`,
    });
  }
  return grants;
}

export interface ExcessGrant {
  id: string;
  invoice_id: string;
  account_id: string;
  currency: string;
  amount: string;
  description: string;
}

/** Writes the grants of the invoices that were written. */
export async function writeExcessGrants(client: PgClient, grants: ExcessGrant[], written: Set<string>): Promise<void> {
  const kept = grants.filter((g) => written.has(g.invoice_id));
  if (kept.length === 0) return;
  await client.query(
    `INSERT INTO credit_grants (id, account_id, currency, amount, remaining, description)
     SELECT id, account_id, currency, amount, amount, description FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[])
            AS g(id, account_id, currency, amount, description)`,
    [
      kept.map((g) => g.id),
      kept.map((g) => g.account_id),
      kept.map((g) => g.currency),
      kept.map((g) => g.amount),
      kept.map((g) => g.description),
    ],
  );
}

interface ThresholdRow extends TaxProfile {
  id: string;
  account_id: string;
  customer_id: string;
  currency: string;
  billing_period_start: Date;
  threshold: string;
}

/** Subscriptions with a threshold looked at per transaction. */
const THRESHOLD_BATCH = 200;

/**
 * Issues a threshold invoice for every running period whose amount due at `now` reaches its subscription's
 * threshold (one per subscription per pass: the next pass looks again). Concurrent passes split the
 * subscriptions (SKIP LOCKED); `scope` as for the billing run (a test clock's customers at its instant).
 */
export async function issueThresholdInvoices(
  deps: BillingDeps,
  now: Date,
  opts: { timings?: BillingTimings; scope?: BillingScope; onBatch?: (issued: ClosedInvoice[]) => void } = {},
): Promise<ClosedInvoice[]> {
  const scope = opts.scope ?? LIVE_CUSTOMERS;
  const all: ClosedInvoice[] = [];
  let after = '';
  for (;;) {
    const batch = await withTransaction(deps.pg, async (client) => {
      const r = await timed(opts.timings, 'postgres_ms', () =>
        client.query<ThresholdRow>(
          `SELECT s.id, s.account_id, a.customer_id, s.currency, s.billing_period_start, s.billing_threshold::text AS threshold,
                  ${TAX_PROFILE_COLUMNS('a')}
             FROM subscriptions s JOIN accounts a ON a.id = s.account_id
            WHERE s.billing_threshold IS NOT NULL AND s.status = 'active' AND s.billing_period_start = $1
              AND s.id > $2 AND ${inScope('s.account_id', '$3')}
            ORDER BY s.id LIMIT $4 FOR UPDATE OF s SKIP LOCKED`,
          // Only the running period (periods are calendar months): once it has ended, its close bills the rest.
          [monthStart(now), after, scope.clockId, THRESHOLD_BATCH],
        ),
      );
      if (r.rows.length === 0) return null;
      after = r.rows[r.rows.length - 1]!.id;
      return issueLocked(deps, client, r.rows, now, opts.timings);
    });
    if (batch === null) return all;
    all.push(...batch);
    if (batch.length) opts.onBatch?.(batch);
  }
}

async function issueLocked(
  deps: BillingDeps,
  client: PgClient,
  subs: ThresholdRow[],
  now: Date,
  timings?: BillingTimings,
): Promise<ClosedInvoice[]> {
  if (subs.length === 0) return [];
  const periods = subs.map((s) => ({
    subscription_id: s.id,
    account_id: s.account_id,
    currency: s.currency,
    startMs: s.billing_period_start.getTime(),
    endMs: nextMonthStart(s.billing_period_start).getTime(),
    usageEndMs: now.getTime(),
  }));
  const priced = await pricePeriods(deps, client, periods, { timings });
  return timed(timings, 'postgres_ms', async () => {
    await deductThresholdInvoices(client, periods, priced);
    const totals = await taxInvoices(
      client,
      subs.map((s, i) => ({ priced: priced[i]!, profile: s })),
    );
    // The amount due as the upcoming invoice shows it, prepaid credit included (tried on copies: the grants are
    // spent only by the invoices issued).
    const ids = subs.map(() => newId('inv'));
    const trial = priced.map((p) => ({ ...p, lines: [...p.lines] }));
    await lockAndAllocateCredits(
      client,
      subs.map((s, i) => ({ invoice_id: ids[i]!, account_id: s.account_id, priced: trial[i]! })),
      now,
    );
    const due = subs.flatMap((s, i) =>
      new Decimal(trial[i]!.amount).gte(s.threshold)
        ? [{ s, id: ids[i]!, priced: priced[i]!, totals: totals[i]! }]
        : [],
    );
    if (due.length === 0) return [];
    const creditUses = await lockAndAllocateCredits(
      client,
      due.map((v) => ({ invoice_id: v.id, account_id: v.s.account_id, priced: v.priced })),
      now,
    );
    const seqs = await client.query<{ subscription_id: string; seq: number }>(
      `SELECT c.subscription_id, COALESCE(max(i.threshold_seq), 0) + 1 AS seq
         FROM unnest($1::text[], $2::date[]) AS c(subscription_id, period_start)
         LEFT JOIN invoices i ON i.subscription_id = c.subscription_id AND i.period_start = c.period_start AND i.reason = 'threshold'
        GROUP BY c.subscription_id`,
      [due.map((v) => v.s.id), due.map((v) => isoDate(v.s.billing_period_start.getTime()))],
    );
    const seqOf = new Map(seqs.rows.map((r) => [r.subscription_id, r.seq]));
    // Issued and charged at once: due now whatever the customer's terms (the threshold is the agreed limit).
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO invoices (id, account_id, customer_id, subscription_id, status, currency, amount, period_start, period_end,
                             created_at, paid_at, next_payment_attempt_at, subtotal, tax, due_at, tax_exempt, number, reason, threshold_seq)
       SELECT u.id, u.account_id, u.customer_id, u.subscription_id, 'open', u.currency, u.amount, u.period_start, u.period_end,
              $9::timestamptz, NULL, $12::timestamptz, u.subtotal, u.tax, $9::timestamptz, u.tax_exempt, NULL::bigint, 'threshold', u.seq
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::date[], $8::date[],
                     $10::numeric[], $11::numeric[], $13::text[], $14::int[])
              AS u(id, account_id, customer_id, subscription_id, currency, amount, period_start, period_end, subtotal, tax, tax_exempt, seq)
       ON CONFLICT (subscription_id, period_start, threshold_seq) WHERE reason = 'threshold' DO NOTHING RETURNING id`,
      [
        due.map((v) => v.id),
        due.map((v) => v.s.account_id),
        due.map((v) => v.s.customer_id),
        due.map((v) => v.s.id),
        due.map((v) => v.s.currency),
        due.map((v) => v.priced.amount),
        due.map((v) => isoDate(v.s.billing_period_start.getTime())),
        due.map((v) => isoDate(nextMonthStart(v.s.billing_period_start).getTime() - 86_400_000)),
        now,
        due.map((v) => v.totals.subtotal),
        due.map((v) => v.totals.tax),
        firstPaymentAttemptAt(now),
        due.map((v) => v.s.tax_exempt),
        due.map((v) => seqOf.get(v.s.id)!),
      ],
    );
    const written = new Set(inserted.rows.map((r) => r.id));
    const kept = due.filter((v) => written.has(v.id));
    await recordCreditUses(
      client,
      creditUses.filter((u) => written.has(u.invoice_id)),
    );
    await insertInvoiceLines(
      client,
      kept.flatMap((v) => v.priced.lines.map((l, position) => ({ invoice_id: v.id, position, ...l }))),
    );
    await appendEvents(
      client,
      kept.flatMap((v) => issuedEvents(v.s.account_id, v.id, v.priced.amount, v.s.currency, 'open')),
    );
    await numberDocuments(
      client,
      'invoices',
      kept.map((v) => v.id),
      deps.numberPrefix,
      now,
    );
    return kept.map((v) => ({
      id: v.id,
      customer_id: v.s.customer_id,
      subscription_id: v.s.id,
      amount: v.priced.amount,
      currency: v.s.currency,
      status: 'open' as const,
    }));
  });
}
