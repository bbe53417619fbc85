import { JsonDecimal } from '../../../shared/money/json.js';
import type { Infra } from '../../../shared/infra.js';
import { hostedInvoiceUrls } from '../../domain/hosted-pages/links.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { amountDue, type InvoiceLineRow, type InvoiceWithLines } from '../../domain/invoices/types.js';

/**
 * The API representation; money goes out as exact JSON numbers (every reply serializes them: shared/http/reply.ts).
 * `hostedUrl`: the invoice's hosted page (invoiceResources builds it).
 */
export function toInvoice({ invoice: r, lines }: InvoiceWithLines, hostedUrl: string | null) {
  return {
    id: r.id,
    number: r.number,
    customer_id: r.customer_id,
    subscription_id: r.subscription_id,
    status: r.status,
    reason: r.reason,
    currency: r.currency,
    subtotal: new JsonDecimal(r.subtotal),
    tax: new JsonDecimal(r.tax),
    amount: new JsonDecimal(r.amount),
    amount_credited: new JsonDecimal(r.amount_credited),
    amount_due: new JsonDecimal(amountDue(r)),
    period_start: r.period_start,
    period_end: r.period_end,
    due_date: r.due_at.toISOString().slice(0, 10),
    tax_exempt: r.tax_exempt,
    lines: lines.map(toInvoiceLine),
    attempt_count: r.attempt_count,
    next_payment_attempt_at: r.next_payment_attempt_at ? r.next_payment_attempt_at.toISOString() : null,
    last_payment_error: r.last_payment_error,
    payment_attempt_status: r.payment_attempt_status,
    dispute_status: r.dispute_status,
    created_at: r.created_at.toISOString(),
    paid_at: r.paid_at ? r.paid_at.toISOString() : null,
    emailed_at: r.emailed_at ? r.emailed_at.toISOString() : null,
    hosted_invoice_url: hostedUrl,
  };
}

/** Invoices as the API shows them, each with its hosted_invoice_url (null: a draft, or a revoked link). */
export async function invoiceResources(deps: Pick<Infra, 'pg' | 'config'>, items: InvoiceWithLines[]) {
  const urls = await hostedInvoiceUrls(
    deps.pg,
    hostedKey(deps.config.SECRET_KEY),
    deps.config.PUBLIC_BASE_URL,
    items.map((i) => i.invoice),
  );
  return items.map((i) => toInvoice(i, urls.get(i.invoice.id) ?? null));
}

export async function invoiceResource(deps: Pick<Infra, 'pg' | 'config'>, item: InvoiceWithLines) {
  return (await invoiceResources(deps, [item]))[0]!;
}

/** A line on the wire (stored invoices and the upcoming one); money as exact JSON numbers. */
export function toInvoiceLine(
  l: Pick<
    InvoiceLineRow,
    | 'type'
    | 'product_id'
    | 'meter_id'
    | 'description'
    | 'quantity'
    | 'unit_price'
    | 'amount'
    | 'adjusts_invoice_id'
    | 'dimensions'
  > &
    Partial<Pick<InvoiceLineRow, 'tax_rate_id' | 'tax_amount' | 'coupon_id'>>,
) {
  return {
    type: l.type,
    product_id: l.product_id,
    meter_id: l.meter_id,
    description: l.description,
    quantity: new JsonDecimal(l.quantity),
    unit_price: new JsonDecimal(l.unit_price),
    amount: new JsonDecimal(l.amount),
    ...(l.adjusts_invoice_id ? { adjusts_invoice_id: l.adjusts_invoice_id } : {}),
    ...(l.dimensions ? { dimensions: l.dimensions } : {}),
    ...(l.coupon_id ? { coupon_id: l.coupon_id } : {}),
    ...(l.tax_rate_id ? { tax_rate_id: l.tax_rate_id, tax_amount: new JsonDecimal(l.tax_amount!) } : {}),
  };
}
