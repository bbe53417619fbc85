import { Decimal, canonicalDecimal } from '../../shared/money/decimal.js';
import { billToLines, formatDecimal, printable, renderPdfDocument, type Seller } from './pdf-document.js';

export { formatDecimal, printable };

/**
 * piscina task: renders one invoice as a PDF (the layout of services/workers/pdf-document.ts). Runs in a worker
 * thread (services/workers/pool.ts) so layout and deflate never block the api's event loop. Input is plain data
 * (structured-cloned into the worker); money arrives as exact decimal strings.
 */
export interface InvoicePdfTask {
  invoice: {
    id: string;
    customer_id: string;
    subscription_id: string;
    status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'void';
    currency: string;
    amount: string;
    /** What credit notes took off it; printed with the amount still due when not 0. */
    amount_credited?: string;
    period_start: string;
    period_end: string;
    /** RFC 3339 */
    created_at: string;
    paid_at: string | null;
    /** The invoice's number and due date, printed when the invoice has them. */
    number?: string | null;
    /** RFC 3339 or YYYY-MM-DD */
    due_at?: string | null;
  };
  lines: {
    product_id: string | null;
    meter_id: string | null;
    description: string;
    quantity: string;
    unit_price: string;
    amount: string;
  }[];
  customer: { name: string | null };
  address: { line1: string; city: string; state: string; zip: string } | null;
  seller?: Seller;
}

const STATUS_LABEL = {
  draft: 'Draft',
  open: 'Open',
  paid: 'Paid',
  uncollectible: 'Uncollectible',
  void: 'Void',
} as const;

export default async function renderInvoicePdf(task: InvoicePdfTask): Promise<Uint8Array> {
  const { invoice } = task;
  const facts: [string, string][] = [];
  if (invoice.number) facts.push(['Invoice number', printable(invoice.number)]);
  facts.push(
    ['Invoice', invoice.id],
    ['Status', STATUS_LABEL[invoice.status]],
    ['Issued', invoice.created_at.slice(0, 10)],
  );
  if (invoice.due_at) facts.push(['Due', invoice.due_at.slice(0, 10)]);
  if (invoice.paid_at) facts.push(['Paid', invoice.paid_at.slice(0, 10)]);
  const credited = new Decimal(invoice.amount_credited ?? '0');
  const totals: [string, string][] = credited.isZero()
    ? [['Total', invoice.amount]]
    : [
        ['Total', invoice.amount],
        ['Credited', canonicalDecimal(credited.neg())],
        [
          invoice.status === 'paid' ? 'Net' : 'Amount due',
          canonicalDecimal(new Decimal(invoice.amount).minus(credited)),
        ],
      ];
  return renderPdfDocument({
    title: 'INVOICE',
    name: `Invoice ${invoice.number ?? invoice.id}`,
    seller: task.seller,
    createdAt: invoice.created_at,
    facts,
    billTo: billToLines(task.customer.name, invoice.customer_id, task.address),
    side: {
      heading: 'Billing period',
      text: `${invoice.period_start} to ${invoice.period_end}`,
      detail: `Subscription ${invoice.subscription_id}`,
    },
    currency: invoice.currency,
    lines: task.lines.map((l) => ({
      description: l.description,
      detail: l.meter_id ? `${l.product_id} · meter ${l.meter_id}` : (l.product_id ?? ''),
      quantity: l.quantity,
      unit_price: l.unit_price,
      amount: l.amount,
    })),
    empty: 'No charges in this period.',
    totals,
  });
}
