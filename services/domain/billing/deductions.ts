import { newId } from '../../../shared/ids.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { sumOfLines, type PricedInvoice, type PricedLine } from '../pricing/invoice-lines.js';
import { insertReturnedGrants } from '../credits/spending-store.js';
import { taxedLinesOf, thresholdBilledRows, thresholdInvoicesOf } from './deductions-store.js';

/**
 * What progressive billing's threshold invoices (thresholds.ts) mean for every other invoice of their period — the
 * rules the period close, later threshold invoices and the upcoming invoice share: the `deduction` lines, what the
 * threshold invoices billed, and an excess (a final invoice below zero) turned into prepaid credit.
 */

/** A period whose invoice deducts its threshold invoices: the subscription and the period's first day. */
export interface PeriodRef {
  subscription_id: string;
  startMs: number;
}

export const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * What the threshold invoices of each period billed so far (Σ of their amounts; void ones excluded): with the
 * upcoming invoice's amount — which deducts them — the period's whole invoiced amount (spend alerts read it).
 */
export async function thresholdBilled(q: PgPool | PgClient, periods: PeriodRef[]): Promise<Decimal[]> {
  if (periods.length === 0) return [];
  const rows = await thresholdBilledRows(
    q,
    periods.map((p) => p.subscription_id),
    periods.map((p) => isoDate(p.startMs)),
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
  const billed = await thresholdInvoicesOf(
    q,
    periods.map((p) => p.subscription_id),
    periods.map((p) => isoDate(p.startMs)),
  );
  if (billed.length === 0) return;
  const taxed = await taxedLinesOf(
    q,
    billed.map((b) => b.id),
  );
  // Per threshold invoice and rate: the tax it billed and the base it was on.
  const taxOf = new Map<string, Map<string, { tax: Decimal; base: Decimal }>>();
  for (const l of taxed) {
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
  for (const b of billed) {
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

/** Line types that give back what an earlier invoice billed: their negative amounts may become credit. */
const GIVE_BACK_LINES: ReadonlySet<PricedLine['type']> = new Set(['deduction', 'adjustment', 'tax']);

/**
 * THE rule of a period whose total is below zero (issue 49): the part of it that becomes prepaid credit — what the
 * period gives back of what was billed before, never more. Only three kinds of line give back: a threshold
 * invoice's `deduction`, a late-usage `adjustment` lowering an invoiced period, and the (negative) tax lines that
 * take their tax back. Usage never does (a quantity below zero prices at 0: price-models.ts billableQuantity), so
 * a negative total made of anything else (a defect) is left as it is — marked paid, nothing granted — rather than
 * minted into credit. Credit notes are the other documented path (credit-notes.ts), outside any invoice.
 */
export function creditableExcess(lines: readonly Pick<PricedLine, 'type' | 'amount'>[]): Decimal {
  const total = sumOfLines(lines);
  if (!total.isNegative() || total.isZero()) return new Decimal(0);
  let givenBack = new Decimal(0);
  for (const l of lines)
    if (GIVE_BACK_LINES.has(l.type) && new Decimal(l.amount).isNegative()) givenBack = givenBack.minus(l.amount);
  return Decimal.min(total.neg(), givenBack);
}

/**
 * Never below zero through what was billed before: when corrections lowered a period below what its threshold
 * invoices (or its earlier invoice) already billed, its final invoice would be negative. That excess
 * (creditableExcess) goes back to the customer as a prepaid credit grant (spent on its next invoices), shown on
 * the final invoice as a `credit` line that brings it to 0. Call it after tax and before prepaid credit, in the
 * transaction that writes the invoices; returns the grants to write once they are.
 */
export function excessAsCredit(
  invoices: { invoice_id: string; account_id: string; priced: PricedInvoice; periodStart: string }[],
  opts: { preview?: boolean } = {},
): ExcessGrant[] {
  const grants: ExcessGrant[] = [];
  for (const v of invoices) {
    const creditable = creditableExcess(v.priced.lines);
    if (creditable.isZero()) continue;
    const excess = canonicalDecimal(creditable);
    const id = newId('cred');
    v.priced.lines.push({
      type: 'credit',
      product_id: null,
      meter_id: null,
      // The upcoming invoice names no grant: none exists until the period's invoice is issued.
      description: `Billed in excess before: returned as prepaid credit${opts.preview ? '' : ` ${id}`}`,
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
      description: `Billed in excess before for the period from ${v.periodStart}`,
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
  await insertReturnedGrants(client, kept);
}
