import { Decimal, canonicalDecimal } from '../../shared/money/decimal.js';
import { billToLines, formatDecimal, printable, renderPdfDocument } from './pdf-document.js';
import type { InvoiceDocument } from '../domain/documents/invoice.js';

/** The task is the invoice's document as the domain assembles it (services/domain/documents/invoice.ts). */
export type InvoicePdfTask = InvoiceDocument;

/** Printed on reverse-charge invoices (EU VAT Directive 2006/112/EC, art. 196 and 226(11a)). */
export const REVERSE_CHARGE_NOTE =
  'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC).';

/**
 * "Bill to" with the legal details: legal name (else the account's name), the customer's own reference (its
 * external id — never meterline's cus_ id), address, tax ids.
 */
function billTo(task: InvoicePdfTask): string[] {
  const { customer, legal_address: a } = task;
  const name = customer.legal_name ?? customer.name;
  const reference = customer.reference ? `Reference ${printable(customer.reference)}` : null;
  const out = a
    ? [
        printable(name ?? ''),
        reference ?? '',
        printable(a.line1),
        ...(a.line2 ? [printable(a.line2)] : []),
        printable(`${a.postal_code} ${a.city}${a.region ? `, ${a.region}` : ''}`),
        a.country,
      ].filter(Boolean)
    : billToLines(name, reference, task.address);
  for (const id of customer.tax_ids ?? []) out.push(printable(`Tax ID ${id.value} (${id.type})`));
  return out;
}

/** Subtotal, the tax added and the tax included (when any), the total; then what credit notes took off. */
function totalsOf(invoice: InvoicePdfTask['invoice']): [string, string][] {
  const out: [string, string][] = [];
  if (invoice.subtotal !== undefined && invoice.tax !== undefined) {
    const included = new Decimal(invoice.tax_included ?? '0');
    const added = new Decimal(invoice.tax).minus(included);
    out.push(['Subtotal', invoice.subtotal]);
    if (!added.isZero() || included.isZero()) out.push(['Tax', canonicalDecimal(added)]);
    if (!included.isZero()) out.push(['Tax included', canonicalDecimal(included)]);
  }
  out.push(['Total', invoice.amount]);
  const credited = new Decimal(invoice.amount_credited ?? '0');
  if (!credited.isZero())
    out.push(
      ['Credited', canonicalDecimal(credited.neg())],
      [invoice.status === 'paid' ? 'Net' : 'Amount due', canonicalDecimal(new Decimal(invoice.amount).minus(credited))],
    );
  return out;
}

export { formatDecimal, printable };

/**
 * piscina task: renders one invoice as a PDF (the layout of services/workers/pdf-document.ts). Runs in a worker
 * thread (services/workers/pool.ts) so layout and deflate never block the api's event loop. Input is plain data
 * (structured-cloned into the worker); money arrives as exact decimal strings.
 */

const STATUS_LABEL = {
  draft: 'Draft',
  open: 'Open',
  paid: 'Paid',
  uncollectible: 'Uncollectible',
  void: 'Void',
} as const;

/**
 * The range the invoice bills, labelled by why it was issued: a period invoice its billing period; a threshold
 * invoice the usage from the period's start to its issue (what was not yet billed when the threshold was
 * reached); an advance invoice the period ahead its flat items are billed for.
 */
export function billedRange(invoice: InvoicePdfTask['invoice']): { heading: string; text: string; detail?: string } {
  const period = `${invoice.period_start} to ${invoice.period_end}`;
  switch (invoice.reason) {
    case 'threshold':
      return {
        heading: 'Threshold invoice',
        text: `Usage from ${invoice.period_start} to ${invoice.created_at.slice(0, 10)}`,
        detail: `Within the billing period ${period}`,
      };
    case 'advance':
      return { heading: 'Billed in advance', text: period, detail: 'Flat fees for the period ahead' };
    default:
      return { heading: 'Billing period', text: period };
  }
}

export default async function renderInvoicePdf(task: InvoicePdfTask): Promise<Uint8Array> {
  const { invoice } = task;
  const facts: [string, string][] = [];
  // The number the customer quotes; a draft has none yet, so it is told apart by its id.
  facts.push(invoice.number ? ['Invoice number', printable(invoice.number)] : ['Draft invoice', invoice.id]);
  facts.push(['Status', STATUS_LABEL[invoice.status]], ['Issued', invoice.created_at.slice(0, 10)]);
  if (invoice.due_at) facts.push(['Due', invoice.due_at.slice(0, 10)]);
  if (invoice.paid_at) facts.push(['Paid', invoice.paid_at.slice(0, 10)]);
  const totals = totalsOf(invoice);
  return renderPdfDocument({
    title: 'INVOICE',
    name: `Invoice ${invoice.number ?? invoice.id}`,
    seller: task.seller,
    createdAt: invoice.created_at,
    facts,
    billTo: billTo(task),
    note: invoice.tax_exempt === 'reverse' ? REVERSE_CHARGE_NOTE : undefined,
    side: billedRange(invoice),
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
    empty: 'No charges in this period.',
    totals,
  });
}
