import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import { Decimal, canonicalDecimal, type DecimalValue } from '../../../shared/money/decimal.js';
import { sumOfLines, type PricedInvoice, type PricedLine } from '../pricing/invoice-lines.js';
import { lineTaxes, rateLabel, ratesOf } from '../tax/compute.js';
import { activeTaxRates, productTaxRateIds, taxRatesByIds } from '../tax/store.js';
import type { TaxProfile, TaxRateRow } from '../tax/types.js';

/**
 * THE invoice-amount pipeline (docs/billing.md "Tax"), one rule for every invoice: the period close (and its late
 * usage adjustments), advance, threshold and draft invoices, the upcoming invoice and credit notes. In order:
 *   1. price the lines (pricing/invoice-lines.ts) and take the coupon's discount (discounts.ts: per product, whole
 *      minor units); threshold deductions (deductions.ts) are appended before tax;
 *   2. attach each discount line to the lines it discounts (attachedDiscounts: per line, whole minor units) — a
 *      line's TAXABLE amount is its amount plus the discount attached to it;
 *   3. tax each taxed line on its taxable amount at each of its rates, rounded ONCE per line and rate
 *      (tax/compute.ts lineTaxes); a deduction takes back the tax its threshold invoice billed;
 *   4. subtotal = Σ of every line but tax and prepaid credit; amount = subtotal + exclusive tax (= Σ lines);
 *   5. then the caller: never below zero (deductions.ts excessAsCredit), prepaid credit (credits.ts), so
 *      amount = subtotal + exclusive tax − credit.
 * Credit notes (credit-notes.ts) credit a line at most its net (amount + attached discount) plus its tax, with the
 * same attachedDiscounts.
 */
export type ProductRates = (productId: string | null) => readonly TaxRateRow[];

export interface InvoiceTotals {
  subtotal: string;
  tax: string;
}

type LineFacts = Pick<PricedLine, 'type' | 'product_id' | 'amount' | 'adjusts_invoice_id' | 'taxes'>;

/** Lines charged for a product: what a discount line of that product discounts. */
const CHARGED = new Set(['flat', 'usage', 'minimum_commitment']);

/** Whether discount line `d` discounts line `l`: the period's own charges of its product, or the adjustments it names. */
function discounts(d: LineFacts, l: LineFacts): boolean {
  if (l.product_id !== d.product_id) return false;
  if (d.adjusts_invoice_id === null) return l.adjusts_invoice_id === null && CHARGED.has(l.type);
  return l.type === 'adjustment' && l.adjusts_invoice_id === d.adjusts_invoice_id;
}

/**
 * Per line, the discount attached to it (≤ 0 on a charge line, 0 elsewhere), and which discount lines were
 * attached. Each discount line of a product is split over the lines it discounts in proportion to their amounts,
 * by whole minor units (largest remainder first, ties in line order): the parts add up to the discount line
 * exactly. A discount line with no line to attach to (or one taxed on its own, as invoices issued before this
 * rule have them) stays unattached and is taxed on its own.
 */
export function attachedDiscounts(
  lines: readonly LineFacts[],
  currency: string,
): { discount: Decimal[]; attached: boolean[] } {
  const discount = lines.map(() => new Decimal(0));
  const attached = lines.map(() => false);
  lines.forEach((d, di) => {
    if (d.type !== 'discount' || d.product_id === null || d.taxes?.length) return;
    const amount = new Decimal(d.amount);
    if (amount.isZero()) return;
    const targets = lines.flatMap((l, i) => (discounts(d, l) ? [i] : []));
    if (targets.length === 0) return;
    // A discount (negative) weighs the lines' charges; a discount given back (positive) their reductions.
    const sign = amount.isNegative() ? 1n : -1n;
    const unit = new Decimal(10).pow(minorUnits(currency));
    const minor = (x: DecimalValue) => BigInt(new Decimal(x).times(unit).toFixed(0));
    let weights = targets.map((i) => minor(lines[i]!.amount) * sign);
    if (!weights.some((w) => w > 0n)) weights = weights.map((w) => (w < 0n ? -w : w));
    const shares = splitExactly(minor(amount.abs()), weights);
    targets.forEach((i, k) => {
      discount[i] = discount[i]!.minus(new Decimal((shares[k]! * sign).toString()).div(unit));
    });
    attached[di] = true;
  });
  return { discount, attached };
}

/**
 * Splits `total` (≥ 0, whole minor units) over `weights` in proportion: each share rounded down, the units left
 * to the largest remainders (ties: the first line) — exact integers, so equal remainders are really equal. Negative
 * weights weigh nothing; when nothing weighs, the first line takes it all. The shares add up to `total`.
 */
export function splitExactly(total: bigint, weights: readonly bigint[]): bigint[] {
  const w = weights.map((x) => (x > 0n ? x : 0n));
  const sum = w.reduce((s, x) => s + x, 0n);
  if (sum === 0n) return w.map((_, i) => (i === 0 ? total : 0n));
  const shares = w.map((x) => (total * x) / sum);
  const order = w
    .map((x, i) => ({ i, rest: total * x - shares[i]! * sum }))
    .sort((a, b) => (a.rest === b.rest ? a.i - b.i : a.rest > b.rest ? -1 : 1));
  let left = total - shares.reduce((s, x) => s + x, 0n);
  for (const { i } of order) {
    if (left <= 0n) break;
    shares[i]! += 1n;
    left -= 1n;
  }
  return shares;
}

/** Lines tax applies to on their own: charges, one-off lines (a setup fee is taxable), unattached discounts. */
function isTaxed(l: LineFacts, attached: boolean): boolean {
  if (l.type === 'discount') return !attached && l.product_id !== null;
  return (
    l.type !== 'credit' && l.type !== 'tax' && l.type !== 'deduction' && (l.product_id !== null || l.type === 'one_off')
  );
}

/** What the subtotal sums: every line but tax and prepaid credit (charges, one-offs, discounts, deductions). */
export const inSubtotal = (l: Pick<PricedLine, 'type'>) => l.type !== 'tax' && l.type !== 'credit';

/**
 * Steps 2–4 on a priced invoice, in place: each taxed line gets its `taxes` (with `base`, the taxable amount, when
 * a discount is attached), one `tax` line per rate is appended (in the order the rates first appear), and the
 * amount becomes Σ lines again. A line without a product (an operator's one-off) is taxed at the customer's
 * default rates, as a product that names none.
 */
export function invoiceAmounts(
  priced: PricedInvoice,
  profile: TaxProfile,
  rates: ProductRates,
  rateById: (id: string) => TaxRateRow | undefined = () => undefined,
): InvoiceTotals {
  const { discount, attached } = attachedDiscounts(priced.lines, priced.currency);
  const subtotal = sumOfLines(priced.lines.filter(inSubtotal));
  const perRate = new Map<string, { rate: TaxRateRow; base: Decimal; tax: Decimal }>();
  const add = (rate: TaxRateRow, base: DecimalValue, tax: DecimalValue) => {
    const r = perRate.get(rate.id) ?? { rate, base: new Decimal(0), tax: new Decimal(0) };
    r.base = r.base.plus(base);
    r.tax = r.tax.plus(tax);
    perRate.set(rate.id, r);
  };
  // A deduction (progressive billing) takes back, at each rate, exactly the tax its threshold invoice billed: the
  // period's invoices together carry the tax of the whole period, whatever the customer's profile is now.
  for (const l of priced.lines) {
    if (l.type !== 'deduction') continue;
    for (const t of l.taxes ?? []) {
      const rate = rateById(t.tax_rate_id);
      if (rate) add(rate, t.base ?? l.amount, t.amount);
    }
  }
  if (profile.tax_exempt === 'none') {
    priced.lines.forEach((l, i) => {
      if (!isTaxed(l, attached[i]!)) return;
      const own = rates(l.product_id);
      if (own.length === 0) return;
      const base = new Decimal(l.amount).plus(discount[i]!);
      const baseText = canonicalDecimal(base);
      l.taxes = lineTaxes(baseText, own, priced.currency).map((t) =>
        base.eq(l.amount) ? t : { ...t, base: baseText },
      );
      l.taxes.forEach((t, k) => add(own[k]!, base, t.amount));
    });
  }
  let tax = new Decimal(0);
  for (const { rate, base, tax: t } of perRate.values()) {
    tax = tax.plus(t);
    const added = rate.inclusive ? '0' : canonicalDecimal(t);
    priced.lines.push({
      type: 'tax',
      product_id: null,
      meter_id: null,
      // The taxed base as printed on an invoice: in the currency's minor unit ("on 129.00", "on 1789" JPY).
      description: `${rateLabel(rate)} on ${base.toFixed(minorUnits(priced.currency))}`,
      quantity: '1',
      unit_price: added,
      amount: added,
      price_model: null,
      adjusts_invoice_id: null,
      tax_rate_id: rate.id,
      tax_amount: canonicalDecimal(t),
    });
  }
  priced.amount = canonicalDecimal(sumOfLines(priced.lines));
  return { subtotal: canonicalDecimal(subtotal), tax: canonicalDecimal(tax) };
}

/**
 * Steps 2–4 for several priced invoices (the close's batch, drafts, threshold and advance invoices, the upcoming
 * invoice) with the rates as they are now: the active rates and each product's named ones, read in `q` (the
 * caller's transaction client). Call it after the threshold deductions and before excessAsCredit and prepaid credit.
 */
export async function amountInvoices(
  q: PgPool | PgClient,
  invoices: { priced: PricedInvoice; profile: TaxProfile }[],
): Promise<InvoiceTotals[]> {
  const taxed = invoices.filter((v) => v.profile.tax_exempt === 'none');
  const products = [
    ...new Set(taxed.flatMap((v) => v.priced.lines.flatMap((l) => (l.product_id === null ? [] : [l.product_id])))),
  ];
  const [active, named] = taxed.length
    ? [await activeTaxRates(q), await productTaxRateIds(q, products)]
    : [new Map<string, TaxRateRow>(), new Map<string, string[]>()];
  // Deduction lines (progressive billing) carry the tax their threshold invoice billed, at its rates.
  const deducted = [
    ...new Set(
      invoices.flatMap((v) =>
        v.priced.lines.flatMap((l) => (l.type === 'deduction' ? (l.taxes ?? []).map((t) => t.tax_rate_id) : [])),
      ),
    ),
  ];
  const byId = deducted.length ? await taxRatesByIds(q, deducted) : new Map<string, TaxRateRow>();
  return invoices.map(({ priced, profile }) =>
    invoiceAmounts(
      priced,
      profile,
      (productId) => ratesOf((productId !== null && named.get(productId)) || [], profile, active),
      (id) => byId.get(id),
    ),
  );
}
