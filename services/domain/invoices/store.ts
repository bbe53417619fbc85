import type { PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { hasPrefix } from '../../../shared/ids.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import { appendEvent } from '../events/outbox-store.js';
import { invoiceVoided } from './events.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { InvoiceLineRow, InvoiceRow, InvoiceWithLines } from './types.js';
import type { InvoiceStatus } from '../../../shared/vocabulary.js';
import { PRINTED_NUMBER_SQL } from './numbering.js';
import { PAYMENT_IN_FLIGHT_SQL } from './payment-in-flight-sql.js';
import type { LegalAddress, TaxId } from '../tax/types.js';
import type { PriceModel } from '../pricing/price-models.js';

const notFound = (id: string) => new NotFoundError(`No invoice ${id}.`);

// Money as exact text; dates formatted by Postgres so no JS Date/time-zone round trip can shift a day. The
// number as printed (services/domain/invoices/numbering.ts): its prefix and at least six digits (ML-2026-000042).
const INVOICE_COLUMNS = `id, ${PRINTED_NUMBER_SQL('invoices')} AS number, account_id, customer_id, subscription_id, status, reason, currency, amount::text AS amount,
  COALESCE(subtotal, amount)::text AS subtotal, tax::text AS tax, COALESCE(tax_exempt, 'none') AS tax_exempt,
  COALESCE(due_at, created_at) AS due_at, to_char(period_start, 'YYYY-MM-DD') AS period_start, to_char(period_end, 'YYYY-MM-DD') AS period_end,
  amount_credited::text AS amount_credited, attempt_count, next_payment_attempt_at, last_payment_error, created_at, paid_at,
  emailed_at, dispute_status,
  (SELECT pa.status FROM payment_attempts pa WHERE pa.invoice_id = invoices.id ORDER BY pa.attempt DESC LIMIT 1) AS payment_attempt_status`;
const LINE_COLUMNS = `invoice_id, position, type, product_id, meter_id, adjusts_invoice_id, description, quantity::text AS quantity,
   unit_price::text AS unit_price, amount::text AS amount, dimensions, tax_rate_id, tax_amount::text AS tax_amount, taxes, coupon_id`;

/** Lines of several invoices in one query, grouped by invoice in printed order. */
async function linesOf(pool: PgPool, invoiceIds: string[]): Promise<Map<string, InvoiceLineRow[]>> {
  const out = new Map<string, InvoiceLineRow[]>(invoiceIds.map((id) => [id, []]));
  if (invoiceIds.length === 0) return out;
  const r = await pool.query<InvoiceLineRow>(
    `SELECT ${LINE_COLUMNS} FROM invoice_lines WHERE invoice_id = ANY($1) ORDER BY invoice_id, position`,
    [invoiceIds],
  );
  for (const line of r.rows) out.get(line.invoice_id)!.push(line);
  return out;
}

/** The account's invoices, newest first (ties by id), optionally of one status. */
export async function listInvoices(
  pool: PgPool,
  accountId: string | null,
  q: { status?: InvoiceStatus; period_from?: string; period_to?: string },
  window: RowWindow,
): Promise<{ items: InvoiceWithLines[]; total: number }> {
  const { rows, total } = await selectPage<InvoiceRow>(
    pool,
    {
      columns: INVOICE_COLUMNS,
      from: 'invoices',
      // accountId null: every account's (an operator's deployment-wide list, accountsListedFor).
      where:
        '($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR status = $2)' +
        ' AND ($3::date IS NULL OR period_end >= $3) AND ($4::date IS NULL OR period_start <= $4)',
      params: [accountId, q.status ?? null, q.period_from ?? null, q.period_to ?? null],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
  const lines = await linesOf(
    pool,
    rows.map((r) => r.id),
  );
  return { items: rows.map((invoice) => ({ invoice, lines: lines.get(invoice.id)! })), total };
}

/** One invoice of the account with its lines; another account's invoice is "not found" like an unknown id. */
export async function getInvoice(pool: PgPool, accountId: string, id: string): Promise<InvoiceWithLines> {
  return selectInvoice(pool, id, accountId);
}

/** One invoice of any account (operators' routes: void, credit notes). */
export async function getInvoiceById(pool: PgPool, id: string): Promise<InvoiceWithLines> {
  return selectInvoice(pool, id, null);
}

async function selectInvoice(pool: PgPool, id: string, accountId: string | null): Promise<InvoiceWithLines> {
  if (!hasPrefix(id, 'inv')) throw notFound(id);
  const r = await pool.query<InvoiceRow>({
    name: 'invoice-get',
    text: `SELECT ${INVOICE_COLUMNS} FROM invoices WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)`,
    values: [id, accountId],
  });
  const invoice = r.rows[0];
  if (!invoice) throw notFound(id);
  return { invoice, lines: (await linesOf(pool, [id])).get(id)! };
}

/** The account's display name, printed on the PDF next to the customer id. */
export async function accountName(pool: PgPool, accountId: string): Promise<string | null> {
  const r = await pool.query<{ name: string }>('SELECT name FROM accounts WHERE id = $1', [accountId]);
  return r.rows[0]?.name ?? null;
}

/** The customer's own reference for itself (its external_id), printed on its invoices instead of meterline's ids. */
export async function customerReference(pool: PgPool, accountId: string): Promise<string | null> {
  const r = await pool.query<{ external_id: string | null }>('SELECT external_id FROM accounts WHERE id = $1', [
    accountId,
  ]);
  return r.rows[0]?.external_id ?? null;
}

/** The price model each usage line of an invoice was priced with (its snapshot), by line position. */
export async function linePriceModels(pool: PgPool, invoiceId: string): Promise<Map<number, PriceModel>> {
  const r = await pool.query<{ position: number; price_model: PriceModel }>(
    'SELECT position, price_model FROM invoice_lines WHERE invoice_id = $1 AND price_model IS NOT NULL',
    [invoiceId],
  );
  return new Map(r.rows.map((row) => [row.position, row.price_model]));
}

/** The printed numbers of invoices of one account (those numbered), by id: a line naming an invoice prints it. */
export async function invoiceNumbers(pool: PgPool, accountId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const r = await pool.query<{ id: string; number: string | null }>(
    `SELECT id, ${PRINTED_NUMBER_SQL('invoices')} AS number FROM invoices WHERE account_id = $1 AND id = ANY($2)`,
    [accountId, ids],
  );
  return new Map(r.rows.filter((row) => row.number).map((row) => [row.id, row.number!]));
}

/** The account's legal details printed on its invoices (the customer's current ones, like its address). */
export async function legalDetails(
  pool: PgPool,
  accountId: string,
): Promise<{ legal_name: string | null; address: LegalAddress | null; tax_ids: TaxId[]; locale: string }> {
  const r = await pool.query<{
    legal_name: string | null;
    address: LegalAddress | null;
    tax_ids: TaxId[];
    locale: string;
  }>('SELECT legal_name, address, tax_ids, locale FROM accounts WHERE id = $1', [accountId]);
  return r.rows[0] ?? { legal_name: null, address: null, tax_ids: [], locale: 'en' };
}

/**
 * Voids an unpaid invoice (docs/design.md §8 Invoice): nothing is charged for it afterwards (payment attempts
 * and dunning only take open invoices; its usage is not re-billed as late usage), and the prepaid credit it had
 * taken goes back to its grants. Voiding a void invoice changes nothing (false: no new event). A paid invoice,
 * one with credit notes or one whose payment attempt is in flight cannot be voided (ConflictError).
 */
export async function voidInvoice(pool: PgPool, id: string, now: Date): Promise<boolean> {
  if (!hasPrefix(id, 'inv')) throw notFound(id);
  return withTransaction(pool, async (client) => {
    const r = await client.query<{
      account_id: string;
      status: InvoiceStatus;
      amount: string;
      currency: string;
      credited: boolean;
      payment_pending: boolean;
    }>(
      `SELECT i.account_id, i.status, i.amount::text AS amount, i.currency,
              EXISTS (SELECT 1 FROM credit_notes n WHERE n.invoice_id = i.id) AS credited,
              ${PAYMENT_IN_FLIGHT_SQL('i.id')} AS payment_pending
         FROM invoices i WHERE i.id = $1 FOR UPDATE OF i`,
      [id],
    );
    const inv = r.rows[0];
    if (!inv) throw notFound(id);
    if (inv.status === 'void') return false;
    if (inv.status === 'draft')
      throw new ConflictError(
        `Invoice ${id} is a draft: finalize it first (POST /v1/billing/invoices/${id}/finalize).`,
        'invoice_draft',
      );
    if (inv.status === 'paid')
      throw new ConflictError(`Invoice ${id} is paid: issue a credit note to refund it instead.`, 'invoice_paid');
    if (inv.credited)
      throw new ConflictError(
        `Invoice ${id} has credit notes: credit what is left instead of voiding it.`,
        'invoice_credited',
      );
    if (inv.payment_pending)
      throw new ConflictError(
        `A payment attempt on invoice ${id} is in progress or its outcome not yet known; retry when it completed.`,
        'invoice_payment_pending',
      );
    await client.query(`UPDATE invoices SET status = 'void', next_payment_attempt_at = NULL WHERE id = $1`, [id]);
    await client.query(
      `WITH returned AS (DELETE FROM credit_applications WHERE invoice_id = $1 RETURNING grant_id, amount)
       UPDATE credit_grants g SET remaining = g.remaining + returned.amount FROM returned WHERE g.id = returned.grant_id`,
      [id],
    );
    await appendEvent(client, invoiceVoided({ ...inv, id }, inv.status));
    return true;
  });
}
