import type { PgClient } from '../../../shared/clients/postgres.js';
import type { PricedLine } from '../pricing/invoice-lines.js';
import type { InvoiceReason, TaxExempt } from '../../../shared/vocabulary.js';

/** The rows an issue writes (services/domain/billing/issue.ts): invoices, their lines, finalized drafts. */

/** An invoice as it is written: issued (open, paid) or, with BILLING_DRAFTS, a draft of the period's close. */
export interface InvoiceRow {
  id: string;
  account_id: string;
  customer_id: string;
  /** null: a top-up invoice (reason top_up, services/domain/billing/top-ups.ts), which bills no subscription. */
  subscription_id: string | null;
  status: 'draft' | 'open' | 'paid';
  currency: string;
  amount: string;
  subtotal: string;
  tax: string;
  tax_exempt: TaxExempt;
  /** YYYY-MM-DD, both inclusive. */
  period_start: string;
  period_end: string;
  due_at: Date;
  /** The first automatic payment attempt of an open invoice (dunning.ts). */
  first_attempt: Date;
  /** The n-th threshold invoice of its period (reason threshold only). */
  threshold_seq: number | null;
}

/**
 * Which invoice of a subscription each reason allows once: one period and one advance invoice per period start, one
 * threshold invoice per sequence number. A re-run (a crashed run's retry) writes nothing twice.
 */
const ONCE: Record<InvoiceReason, string> = {
  period: `(subscription_id, period_start) WHERE reason = 'period'`,
  advance: `(subscription_id, period_start) WHERE reason = 'advance'`,
  threshold: `(subscription_id, period_start, threshold_seq) WHERE reason = 'threshold'`,
  // A top-up is its own invoice each time (its idempotency is the top-up's key, credit_top_ups_key).
  top_up: '(id)',
};

/**
 * Writes invoices of one reason in one statement, numberless (numbers are taken last, for the invoices really
 * written); returns the ids written — an invoice its reason already has for the period is skipped.
 */
export async function insertInvoices(
  client: PgClient,
  reason: InvoiceReason,
  invoices: InvoiceRow[],
  now: Date,
): Promise<Set<string>> {
  if (invoices.length === 0) return new Set();
  const col = <K extends keyof InvoiceRow>(k: K) => invoices.map((v) => v[k]);
  const r = await client.query<{ id: string }>(
    `INSERT INTO invoices (id, account_id, customer_id, subscription_id, status, currency, amount, period_start, period_end,
                           created_at, paid_at, next_payment_attempt_at, subtotal, tax, due_at, tax_exempt, number, reason, threshold_seq)
     SELECT u.id, u.account_id, u.customer_id, u.subscription_id, u.status, u.currency, u.amount, u.period_start, u.period_end,
            $9::timestamptz, CASE WHEN u.status = 'paid' THEN $9::timestamptz END, CASE WHEN u.status = 'open' THEN u.first_attempt END,
            u.subtotal, u.tax, u.due_at, u.tax_exempt, NULL::bigint, $16, u.seq
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::date[], $10::date[],
                   $11::numeric[], $12::numeric[], $13::timestamptz[], $14::text[], $15::timestamptz[], $17::int[])
            AS u(id, account_id, customer_id, subscription_id, status, currency, amount, period_start, period_end,
                 subtotal, tax, due_at, tax_exempt, first_attempt, seq)
     ON CONFLICT ${ONCE[reason]} DO NOTHING RETURNING id`,
    [
      col('id'),
      col('account_id'),
      col('customer_id'),
      col('subscription_id'),
      col('status'),
      col('currency'),
      col('amount'),
      col('period_start'),
      now,
      col('period_end'),
      col('subtotal'),
      col('tax'),
      col('due_at'),
      col('tax_exempt'),
      col('first_attempt'),
      reason,
      col('threshold_seq'),
    ],
  );
  return new Set(r.rows.map((x) => x.id));
}

/** Drafts finalized (drafts.ts): their amounts, taxes and due dates as they are now, issued at `now`. */
export async function finalizeDraftRows(
  client: PgClient,
  invoices: Pick<
    InvoiceRow,
    'id' | 'status' | 'amount' | 'subtotal' | 'tax' | 'due_at' | 'tax_exempt' | 'first_attempt'
  >[],
  now: Date,
): Promise<void> {
  const col = <K extends keyof (typeof invoices)[number]>(k: K) => invoices.map((v) => v[k]);
  await client.query(
    `UPDATE invoices i SET status = u.status, amount = u.amount, created_at = $4,
            paid_at = CASE WHEN u.status = 'paid' THEN $4::timestamptz END,
            next_payment_attempt_at = CASE WHEN u.status = 'open' THEN u.first_attempt END,
            subtotal = u.subtotal, tax = u.tax, due_at = u.due_at, tax_exempt = u.tax_exempt
       FROM unnest($1::text[], $2::text[], $3::numeric[], $5::numeric[], $6::numeric[], $7::timestamptz[], $8::text[],
                   $9::timestamptz[])
            AS u(id, status, amount, subtotal, tax, due_at, tax_exempt, first_attempt)
      WHERE i.id = u.id`,
    [
      col('id'),
      col('status'),
      col('amount'),
      now,
      col('subtotal'),
      col('tax'),
      col('due_at'),
      col('tax_exempt'),
      col('first_attempt'),
    ],
  );
}

/** Deletes invoices' lines (a draft's, before its finalization writes them again). */
export async function deleteInvoiceLines(client: PgClient, invoiceIds: string[]): Promise<void> {
  await client.query('DELETE FROM invoice_lines WHERE invoice_id = ANY($1)', [invoiceIds]);
}

/** Writes invoice lines (positions given) in one statement. */
export async function insertInvoiceLines(
  client: PgClient,
  lines: (PricedLine & { invoice_id: string; position: number })[],
): Promise<void> {
  if (lines.length) {
    await client.query(
      `INSERT INTO invoice_lines (invoice_id, position, product_id, meter_id, description, quantity, unit_price, amount, type, price_model, adjusts_invoice_id, dimensions,
                                 service_start, service_end, tax_rate_id, tax_amount, taxes, coupon_id)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::numeric[], $8::numeric[], $9::text[], $10::jsonb[], $11::text[], $12::jsonb[],
                            $13::timestamptz[], $14::timestamptz[], $15::text[], $16::numeric[], $17::jsonb[], $18::text[])`,
      [
        lines.map((l) => l.invoice_id),
        lines.map((l) => l.position),
        lines.map((l) => l.product_id),
        lines.map((l) => l.meter_id),
        lines.map((l) => l.description),
        lines.map((l) => l.quantity),
        lines.map((l) => l.unit_price),
        lines.map((l) => l.amount),
        lines.map((l) => l.type),
        lines.map((l) => (l.price_model ? JSON.stringify(l.price_model) : null)),
        lines.map((l) => l.adjusts_invoice_id),
        lines.map((l) => (l.dimensions ? JSON.stringify(l.dimensions) : null)),
        lines.map((l) => (l.service ? new Date(l.service.fromMs) : null)),
        lines.map((l) => (l.service ? new Date(l.service.toMs) : null)),
        lines.map((l) => l.tax_rate_id ?? null),
        lines.map((l) => l.tax_amount ?? null),
        lines.map((l) => (l.taxes ? JSON.stringify(l.taxes) : null)),
        lines.map((l) => l.coupon_id ?? null),
      ],
    );
  }
}

/** Which of `ids` had a threshold invoice issued in the `spacingSeconds` before `now` (threshold-spacing.ts). */
export async function recentThresholdInvoiceSubscriptions(
  client: PgClient,
  ids: string[],
  now: Date,
  spacingSeconds: number,
): Promise<Set<string>> {
  const r = await client.query<{ subscription_id: string }>(
    `SELECT DISTINCT subscription_id FROM invoices
      WHERE subscription_id = ANY($1) AND reason = 'threshold'
        AND created_at > $2::timestamptz - make_interval(secs => $3) AND created_at <= $2::timestamptz`,
    [ids, now, spacingSeconds],
  );
  return new Set(r.rows.map((x) => x.subscription_id));
}
