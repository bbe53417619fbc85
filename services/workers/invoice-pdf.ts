import { Decimal, canonicalDecimal } from '../../shared/money/decimal.js';
import { billToLines, formatDecimal, printable, renderPdfDocument } from './pdf-document.js';
import type { InvoiceDocument } from '../domain/documents/invoice.js';
import { invoiceTexts, type InvoiceTexts } from '../domain/invoices/invoice-texts.js';

/** The task is the invoice's document as the domain assembles it (services/domain/documents/invoice.ts). */
export type InvoicePdfTask = InvoiceDocument;

/** Printed on reverse-charge invoices (EU VAT Directive 2006/112/EC, art. 196 and 226(11a)); in English. */
export const REVERSE_CHARGE_NOTE = invoiceTexts().labels.reverseCharge;

/**
 * "Bill to" with the legal details: legal name (else the account's name), the customer's own reference (its
 * external id — never meterline's cus_ id), address, tax ids.
 */
function billTo(task: InvoicePdfTask, t: InvoiceTexts): string[] {
  const { customer, legal_address: a } = task;
  const name = customer.legal_name ?? customer.name;
  const reference = customer.reference ? `${t.labels.reference} ${printable(customer.reference)}` : null;
  const out = a
    ? [
        printable(name ?? ''),
        reference ?? '',
        printable(a.line1),
        ...(a.line2 ? [printable(a.line2)] : []),
        printable(`${a.postal_code} ${a.city}${a.region ? `, ${a.region}` : ''}`),
        a.country,
      ].filter(Boolean)
    : billToLines(name, reference, task.address, t.labels.noAddress);
  for (const id of customer.tax_ids ?? []) out.push(printable(`${t.labels.taxId} ${id.value} (${id.type})`));
  return out;
}

/** Subtotal, the tax added and the tax included (when any), the total; then what credit notes took off. */
function totalsOf(invoice: InvoicePdfTask['invoice'], l: InvoiceTexts['labels']): [string, string][] {
  const out: [string, string][] = [];
  if (invoice.subtotal !== undefined && invoice.tax !== undefined) {
    const included = new Decimal(invoice.tax_included ?? '0');
    const added = new Decimal(invoice.tax).minus(included);
    out.push([l.subtotal, invoice.subtotal]);
    if (!added.isZero() || included.isZero()) out.push([l.tax, canonicalDecimal(added)]);
    if (!included.isZero()) out.push([l.taxIncluded, canonicalDecimal(included)]);
  }
  out.push([l.total, invoice.amount]);
  const credited = new Decimal(invoice.amount_credited ?? '0');
  if (!credited.isZero())
    out.push(
      [l.credited, canonicalDecimal(credited.neg())],
      [invoice.status === 'paid' ? l.net : l.amountDue, canonicalDecimal(new Decimal(invoice.amount).minus(credited))],
    );
  return out;
}

export { formatDecimal, printable };

/**
 * piscina task: renders one invoice as a PDF (the layout of services/workers/pdf-document.ts). Runs in a worker
 * thread (services/workers/pool.ts) so layout and deflate never block the api's event loop. Input is plain data
 * (structured-cloned into the worker); money arrives as exact decimal strings.
 */

/**
 * The range the invoice bills, labelled by why it was issued: a period invoice its billing period; a threshold
 * invoice the usage from the period's start to its issue (what was not yet billed when the threshold was
 * reached); an advance invoice the period ahead its flat items are billed for.
 */
export function billedRange(
  invoice: InvoicePdfTask['invoice'],
  t: InvoiceTexts = invoiceTexts(),
): { heading: string; text: string; detail?: string } {
  const l = t.labels;
  const period = l.range(t.date(invoice.period_start), t.date(invoice.period_end));
  switch (invoice.reason) {
    case 'threshold':
      return {
        heading: l.thresholdInvoice,
        text: l.usageFrom(t.date(invoice.period_start), t.date(invoice.created_at)),
        detail: l.withinPeriod(period),
      };
    case 'advance':
      return { heading: l.billedInAdvance, text: period, detail: l.flatFeesAhead };
    default:
      return { heading: l.billingPeriod, text: period };
  }
}

export default async function renderInvoicePdf(task: InvoicePdfTask): Promise<Uint8Array> {
  const { invoice } = task;
  const t = invoiceTexts(task.locale);
  const l = t.labels;
  const facts: [string, string][] = [];
  // The number the customer quotes; a draft has none yet, so it is told apart by its id.
  facts.push(invoice.number ? [l.invoiceNumber, printable(invoice.number)] : [l.draftInvoice, invoice.id]);
  facts.push([l.status, l.statuses[invoice.status]], [l.issued, t.date(invoice.created_at)]);
  if (invoice.due_at) facts.push([l.due, t.date(invoice.due_at)]);
  if (invoice.paid_at) facts.push([l.paid, t.date(invoice.paid_at)]);
  const totals = totalsOf(invoice, l);
  return renderPdfDocument({
    title: l.invoiceTitle,
    texts: t,
    name: `Invoice ${invoice.number ?? invoice.id}`,
    seller: task.seller,
    createdAt: invoice.created_at,
    facts,
    billTo: billTo(task, t),
    note: invoice.tax_exempt === 'reverse' ? l.reverseCharge : undefined,
    side: billedRange(invoice, t),
    currency: invoice.currency,
    lines: task.lines.flatMap((l) => [
      {
        description: l.description,
        detail: l.detail,
        quantity: l.quantity,
        unit_price: l.unit_price,
        amount: l.amount,
      },
      ...(l.sub ?? []).map((s) => ({ ...s, detail: '', sub: true })),
    ]),
    empty: l.noCharges,
    totals,
  });
}
