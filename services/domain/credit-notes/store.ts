import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { hasPrefix } from '../../../shared/ids.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { InvoiceStatus } from '../../../shared/vocabulary.js';
import type { RefundResult } from '../payments/processor.js';
import type { CreditNoteLineRow, CreditNoteRow, CreditNoteWithLines } from './types.js';
import type { CreditNoteType, LineType } from '../../../shared/vocabulary.js';
import { PRINTED_NUMBER_SQL } from '../invoices/numbering.js';
import { PAYMENT_IN_FLIGHT_SQL } from '../invoices/payment-in-flight-sql.js';
import type { LineTax } from '../pricing/invoice-lines.js';

const notFound = (id: string) => new NotFoundError(`No credit note ${id}.`);
const noInvoice = (id: string) => new NotFoundError(`No invoice ${id}.`);

const NOTE_COLUMNS = `n.id, ${PRINTED_NUMBER_SQL('n')} AS number, n.account_id, n.invoice_id, i.customer_id, n.type, n.currency, n.amount::text AS amount, n.tax::text AS tax, n.reason,
  n.refund_status, n.refund_id, n.refund_failure_code, n.created_at`;
const NOTES = 'credit_notes n JOIN invoices i ON i.id = n.invoice_id';
const LINE_COLUMNS =
  'credit_note_id, position, invoice_position, tax_of_position, description, quantity::text AS quantity, amount::text AS amount';

/** An invoice as a credit note sees it, locked for the rest of the transaction. */
export interface InvoiceToCredit {
  id: string;
  account_id: string;
  status: InvoiceStatus;
  currency: string;
  amount: string;
  amount_credited: string;
  /** The invoice's tax, and what credit notes reversed of it so far. */
  tax: string;
  tax_credited: string;
  /** A payment attempt is recorded and its charge may be in flight for what was owed when it began. */
  payment_pending: boolean;
  /** The succeeded charge of a paid invoice (what a refund pays back); null when it was settled without one. */
  charge_id: string | null;
}

/** An invoice line with what credit notes took off it so far. */
export interface LineToCredit {
  position: number;
  type: LineType;
  /** What a discount line discounts (services/domain/billing/invoice-amounts.ts attachedDiscounts). */
  product_id: string | null;
  adjusts_invoice_id: string | null;
  /** Taxed lines: their tax per rate; tax lines: their rate, tax and whether it is added (amount ≠ 0) or included. */
  taxes: LineTax[] | null;
  tax_rate_id: string | null;
  description: string;
  quantity: string;
  amount: string;
  credited_amount: string;
  credited_quantity: string;
}

/** Locks the invoice (FOR UPDATE: credit notes and payment steps of one invoice are serialised). Operators credit any account's invoice. */
export async function lockInvoiceToCredit(client: PgClient, invoiceId: string): Promise<InvoiceToCredit> {
  if (!hasPrefix(invoiceId, 'inv')) throw noInvoice(invoiceId);
  const r = await client.query<InvoiceToCredit>(
    `SELECT i.id, i.account_id, i.status, i.currency, i.amount::text AS amount, i.amount_credited::text AS amount_credited,
            i.tax::text AS tax,
            (SELECT COALESCE(sum(n.tax), 0) FROM credit_notes n WHERE n.invoice_id = i.id AND n.refund_status IS DISTINCT FROM 'failed')::text AS tax_credited,
            ${PAYMENT_IN_FLIGHT_SQL('i.id')} AS payment_pending,
            (SELECT pa.charge_id FROM payment_attempts pa WHERE pa.invoice_id = i.id AND pa.status = 'succeeded' ORDER BY pa.attempt DESC LIMIT 1) AS charge_id
       FROM invoices i WHERE i.id = $1 FOR UPDATE OF i`,
    [invoiceId],
  );
  if (!r.rows[0]) throw noInvoice(invoiceId);
  return r.rows[0];
}

/** The invoice's lines in printed order, each with the amount and quantity credited on it so far. */
export async function linesToCredit(client: PgClient, invoiceId: string): Promise<LineToCredit[]> {
  const r = await client.query<LineToCredit>(
    `SELECT l.position, l.type, l.product_id, l.adjusts_invoice_id, l.taxes, l.tax_rate_id, l.description, l.quantity::text AS quantity, l.amount::text AS amount,
            COALESCE(c.amount, 0)::text AS credited_amount, COALESCE(c.quantity, 0)::text AS credited_quantity
       FROM invoice_lines l
       LEFT JOIN (SELECT cl.invoice_position, sum(cl.amount) AS amount, sum(cl.quantity) AS quantity
                    FROM credit_note_lines cl JOIN credit_notes n ON n.id = cl.credit_note_id
                   WHERE n.invoice_id = $1 AND cl.invoice_position IS NOT NULL AND n.refund_status IS DISTINCT FROM 'failed'
                   GROUP BY cl.invoice_position) c ON c.invoice_position = l.position
      WHERE l.invoice_id = $1 ORDER BY l.position`,
    [invoiceId],
  );
  return r.rows;
}

/** The note an earlier run of the same request (same Idempotency-Key) made on this invoice, if any. */
export async function creditNoteOfRequest(
  client: PgClient,
  invoiceId: string,
  requestKey: string,
): Promise<CreditNoteWithLines | null> {
  const r = await client.query<CreditNoteRow>(
    `SELECT ${NOTE_COLUMNS} FROM ${NOTES} WHERE n.invoice_id = $1 AND n.request_key = $2`,
    [invoiceId, requestKey],
  );
  return r.rows[0] ? { note: r.rows[0], lines: (await linesOf(client, [r.rows[0].id])).get(r.rows[0].id)! } : null;
}

export interface CreditNoteToInsert {
  id: string;
  invoice: InvoiceToCredit;
  type: CreditNoteType;
  amount: string;
  /** The tax the note reverses (inside `amount`). */
  tax: string;
  reason: string;
  requestKey: string | null;
  lines: {
    invoice_position: number | null;
    /** A line reversing tax: the invoice line whose tax it is (invoice_position is the tax line). */
    tax_of_position?: number | null;
    description: string;
    quantity: string | null;
    amount: string;
  }[];
}

/**
 * Writes the note and its lines and adds its amount to the invoice's amount_credited (the CHECK refuses a sum
 * above the invoice's amount). `settle`: nothing is left to pay — the invoice is paid without a charge.
 */
export async function insertCreditNote(
  client: PgClient,
  n: CreditNoteToInsert,
  settle: boolean,
  now: Date,
): Promise<CreditNoteWithLines> {
  await client.query(
    // number NULL here (not the column's default): the note is numbered as its transaction's last step.
    `INSERT INTO credit_notes (id, account_id, invoice_id, type, currency, amount, reason, refund_status, request_key, created_at, tax, number)
     VALUES ($1, $2, $3, $4, $5, $6::numeric, $7, CASE WHEN $4 = 'refund' THEN 'pending' END, $8, $9, $10::numeric, NULL)`,
    [
      n.id,
      n.invoice.account_id,
      n.invoice.id,
      n.type,
      n.invoice.currency,
      n.amount,
      n.reason,
      n.requestKey,
      now,
      n.tax,
    ],
  );
  await client.query(
    `INSERT INTO credit_note_lines (credit_note_id, position, invoice_position, description, quantity, amount, tax_of_position)
     SELECT $1, u.ord - 1, u.invoice_position, u.description, u.quantity, u.amount, u.tax_of_position
       FROM unnest($2::int[], $3::text[], $4::numeric[], $5::numeric[], $6::int[])
            WITH ORDINALITY AS u(invoice_position, description, quantity, amount, tax_of_position, ord)`,
    [
      n.id,
      n.lines.map((l) => l.invoice_position),
      n.lines.map((l) => l.description),
      n.lines.map((l) => l.quantity),
      n.lines.map((l) => l.amount),
      n.lines.map((l) => l.tax_of_position ?? null),
    ],
  );
  await client.query(
    `UPDATE invoices SET amount_credited = amount_credited + $2::numeric,
            status = CASE WHEN $3 THEN 'paid' ELSE status END, paid_at = CASE WHEN $3 THEN $4::timestamptz ELSE paid_at END,
            next_payment_attempt_at = CASE WHEN $3 THEN NULL ELSE next_payment_attempt_at END
      WHERE id = $1`,
    [n.invoice.id, n.amount, settle, now],
  );
  return (await getCreditNote(client, n.invoice.account_id, n.id))!;
}

/** A refund note still waiting for the processor's answer, with the charge it pays back. */
export interface PendingRefund {
  id: string;
  account_id: string;
  amount: string;
  currency: string;
  charge_id: string;
}

/** Refund notes a crash (or a processor error) left pending, oldest first; `ids`: only these. */
export async function pendingRefunds(
  pool: PgPool,
  limit: number,
  ids: string[] | null = null,
): Promise<PendingRefund[]> {
  const r = await pool.query<PendingRefund>(
    `SELECT n.id, n.account_id, n.amount::text AS amount, n.currency, pa.charge_id
       FROM credit_notes n JOIN payment_attempts pa ON pa.invoice_id = n.invoice_id AND pa.status = 'succeeded'
      WHERE n.refund_status = 'pending' AND ($2::text[] IS NULL OR n.id = ANY($2)) ORDER BY n.created_at, n.id LIMIT $1`,
    [limit, ids],
  );
  return r.rows;
}

/**
 * Records the processor's answer on a pending refund; false when another run recorded it first. A failed refund
 * gave nothing back, so its amount no longer counts as credited on the invoice (it may be credited again).
 */
/**
 * A refund the processor first accepted and that failed later (Stripe's `refund.failed`: the card was closed, say):
 * the note records the failure, and, as for a refund refused at once, its amount no longer counts as credited.
 * Only a note still showing the refund as succeeded changes, so a repeated or late event changes nothing.
 */
export async function failSettledRefund(client: PgClient, refundId: string, failureCode: string): Promise<boolean> {
  const r = await client.query<{ n: number }>(
    `WITH done AS (
       UPDATE credit_notes SET refund_status = 'failed', refund_failure_code = $2
        WHERE refund_id = $1 AND refund_status = 'succeeded'
       RETURNING invoice_id, amount),
     released AS (
       UPDATE invoices i SET amount_credited = i.amount_credited - done.amount FROM done WHERE i.id = done.invoice_id RETURNING 1)
     SELECT count(*)::int AS n FROM done`,
    [refundId, failureCode],
  );
  return r.rows[0]!.n === 1;
}

export async function completeRefund(pool: PgPool, id: string, result: RefundResult): Promise<boolean> {
  const r = await pool.query<{ n: number }>(
    `WITH done AS (
       UPDATE credit_notes SET refund_status = $2, refund_id = $3, refund_failure_code = $4 WHERE id = $1 AND refund_status = 'pending'
       RETURNING invoice_id, amount),
     released AS (
       UPDATE invoices i SET amount_credited = i.amount_credited - done.amount FROM done WHERE i.id = done.invoice_id AND $2 = 'failed' RETURNING 1)
     SELECT count(*)::int AS n FROM done`,
    [
      id,
      result.status,
      result.status === 'succeeded' ? result.id : null,
      result.status === 'failed' ? result.failure_code : null,
    ],
  );
  return r.rows[0]!.n === 1;
}

/** Lines of several notes in one query, grouped by note in printed order. */
async function linesOf(q: PgPool | PgClient, ids: string[]): Promise<Map<string, CreditNoteLineRow[]>> {
  const out = new Map<string, CreditNoteLineRow[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const r = await q.query<CreditNoteLineRow>(
    `SELECT ${LINE_COLUMNS} FROM credit_note_lines WHERE credit_note_id = ANY($1) ORDER BY credit_note_id, position`,
    [ids],
  );
  for (const line of r.rows) out.get(line.credit_note_id)!.push(line);
  return out;
}

/** The account's credit notes, newest first (ties by id), optionally of one invoice. */
export async function listCreditNotes(
  pool: PgPool,
  accountId: string,
  q: { invoice_id?: string },
  window: RowWindow,
): Promise<{ items: CreditNoteWithLines[]; total: number }> {
  const { rows, total } = await selectPage<CreditNoteRow>(
    pool,
    {
      columns: NOTE_COLUMNS,
      from: NOTES,
      where: 'n.account_id = $1 AND ($2::text IS NULL OR n.invoice_id = $2)',
      params: [accountId, q.invoice_id ?? null],
      orderBy: 'n.created_at DESC, n.id DESC',
    },
    window,
  );
  const lines = await linesOf(
    pool,
    rows.map((r) => r.id),
  );
  return { items: rows.map((note) => ({ note, lines: lines.get(note.id)! })), total };
}

/** One note of the account; another account's note is "not found" like an unknown id. */
export async function getCreditNote(q: PgPool | PgClient, accountId: string, id: string): Promise<CreditNoteWithLines> {
  if (!hasPrefix(id, 'cn')) throw notFound(id);
  const r = await q.query<CreditNoteRow>(`SELECT ${NOTE_COLUMNS} FROM ${NOTES} WHERE n.id = $1 AND n.account_id = $2`, [
    id,
    accountId,
  ]);
  if (!r.rows[0]) throw notFound(id);
  return { note: r.rows[0], lines: (await linesOf(q, [id])).get(id)! };
}
