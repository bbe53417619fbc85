import { Decimal, canonicalDecimal, formatGrouped } from '../../../shared/money/decimal.js';
import type { PriceModel } from '../pricing/price-models.js';
import { lineBreakdown, type SubLine } from './line-breakdown.js';
import type { InvoiceLineRow } from './types.js';

/**
 * The lines of an invoice as its document shows them (the PDF; issue 48): what a customer reads, not meterline's
 * ids — product names are in the descriptions, an invoice a line refers to is named by its number; tiered and
 * package usage lines carry sub-lines that multiply (line-breakdown.ts); the discount lines of one coupon (one
 * per product it discounts, stored apart for tax) are one line with their sum. Σ of the document lines = Σ of the
 * invoice lines: nothing is added or dropped, only grouped.
 */
export interface DocumentLine {
  description: string;
  /** A second, smaller line under the description ("12.00 included in the lines above"); '' for none. */
  detail: string;
  quantity: string | null;
  unit_price: string | null;
  amount: string;
  sub?: SubLine[];
}

export function documentLines(
  lines: readonly InvoiceLineRow[],
  currency: string,
  priceModels: ReadonlyMap<number, PriceModel>,
  invoiceNumbers: ReadonlyMap<string, string>,
): DocumentLine[] {
  const out: DocumentLine[] = [];
  const byCoupon = new Map<string, DocumentLine>();
  for (const l of lines) {
    const description = namedInvoices(l.description, invoiceNumbers);
    if (l.type === 'discount' && l.coupon_id) {
      // Same coupon, same text (a per-product share of one discount): one line, the shares summed.
      const key = `${l.coupon_id}\u0000${description}`;
      const seen = byCoupon.get(key);
      if (seen) {
        seen.amount = canonicalDecimal(new Decimal(seen.amount).plus(l.amount));
        seen.unit_price = seen.amount;
        continue;
      }
      const line = { description, detail: '', quantity: l.quantity, unit_price: l.unit_price, amount: l.amount };
      byCoupon.set(key, line);
      out.push(line);
      continue;
    }
    const breakdown = lineBreakdown({ ...l, description, price_model: priceModels.get(l.position) ?? null }, currency);
    const includedTax =
      l.type === 'tax' && l.tax_amount != null && new Decimal(l.amount).isZero() && !new Decimal(l.tax_amount).isZero();
    out.push({
      description: breakdown?.description ?? description,
      detail: includedTax ? `${formatGrouped(new Decimal(l.tax_amount!))} included in the lines above` : '',
      quantity: l.quantity,
      // A line broken down into tiers has no one unit price: its sub-lines show them.
      unit_price: breakdown ? null : l.unit_price,
      amount: l.amount,
      ...(breakdown ? { sub: breakdown.sub } : {}),
    });
  }
  return out;
}

const INVOICE_ID = /\binv_[A-Za-z0-9]+/g;

/** The invoices the lines' texts name by id (an adjustment's earlier invoice), to look their numbers up. */
export function invoicesNamedIn(lines: readonly { description: string }[]): string[] {
  return [...new Set(lines.flatMap((l) => l.description.match(INVOICE_ID) ?? []))];
}

/** "(invoice inv_…)" in a line's text → "(invoice ML-000042)": the number the customer has, when it has one. */
function namedInvoices(text: string, numbers: ReadonlyMap<string, string>): string {
  return text.replace(INVOICE_ID, (id) => numbers.get(id) ?? 'an earlier invoice');
}
