import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { LineTax } from '../pricing/invoice-lines.js';
import { PRINTED_NUMBER_SQL } from '../invoices/numbering.js';

/**
 * The threshold invoices of periods, the SQL behind deductions.ts: what they billed, and the lines and taxes a
 * period's later invoice deducts. A period is `subscriptionIds[i]` and its first day `periodStarts[i]` (YYYY-MM-DD);
 * void invoices and drafts never count.
 */

/** Σ of the threshold invoices' amounts of each period, in the periods' order (0 for none). */
export async function thresholdBilledRows(
  q: PgPool | PgClient,
  subscriptionIds: string[],
  periodStarts: string[],
): Promise<{ n: number; billed: string }[]> {
  const { rows } = await q.query<{ n: number; billed: string }>(
    `SELECT c.n, COALESCE(sum(i.amount), 0)::text AS billed
       FROM unnest($1::text[], $2::date[]) WITH ORDINALITY AS c(subscription_id, period_start, n)
       LEFT JOIN invoices i ON i.subscription_id = c.subscription_id AND i.period_start = c.period_start
                           AND i.reason = 'threshold' AND i.status NOT IN ('void', 'draft')
      GROUP BY c.n ORDER BY c.n`,
    [subscriptionIds, periodStarts],
  );
  return rows;
}

/** The periods' threshold invoices, oldest first per subscription, with their printed number and subtotal. */
export async function thresholdInvoicesOf(
  q: PgPool | PgClient,
  subscriptionIds: string[],
  periodStarts: string[],
): Promise<{ subscription_id: string; id: string; number: string | null; subtotal: string }[]> {
  const billed = await q.query<{ subscription_id: string; id: string; number: string | null; subtotal: string }>(
    `SELECT i.subscription_id, i.id, ${PRINTED_NUMBER_SQL('i')} AS number, i.subtotal::text AS subtotal
       FROM unnest($1::text[], $2::date[]) AS c(subscription_id, period_start)
       JOIN invoices i ON i.subscription_id = c.subscription_id AND i.period_start = c.period_start
                      AND i.reason = 'threshold' AND i.status NOT IN ('void', 'draft')
      ORDER BY i.subscription_id, i.threshold_seq`,
    [subscriptionIds, periodStarts],
  );
  return billed.rows;
}

/** The taxed lines of the invoices: each line's amount and the tax it carries per rate. */
export async function taxedLinesOf(
  q: PgPool | PgClient,
  invoiceIds: string[],
): Promise<{ invoice_id: string; amount: string; taxes: LineTax[] }[]> {
  const taxed = await q.query<{ invoice_id: string; amount: string; taxes: LineTax[] }>(
    `SELECT invoice_id, amount::text AS amount, taxes FROM invoice_lines WHERE invoice_id = ANY($1) AND taxes IS NOT NULL`,
    [invoiceIds],
  );
  return taxed.rows;
}
