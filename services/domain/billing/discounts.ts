import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import { sumOfLines, type PricedInvoice, type PricedLine } from '../pricing/invoice-lines.js';
import { allocate, discountOf, termsLabel } from '../coupons/discount.js';
import { couponsCovering, type CouponSlot } from './coupon-periods.js';
import { couponTermsIn } from '../pricing/price-books.js';
import { billedPerProduct, couponsOfInvoices, type CouponRowTerms } from './discounts-store.js';

/**
 * THE rule of discounts on invoices (docs/coupons.md), used by every pricing of a period — the close, drafts and their
 * finalization, threshold invoices and the upcoming invoice all price through pricePeriods, which calls this right
 * after the line maths, so before threshold deductions, tax and prepaid credit. It appends to each priced period:
 * - its own discount: the coupon that covers the invoice (couponsCovering, coupon-periods.ts: which invoices a
 *   `once`, `repeating` or `forever` coupon reaches) takes discountOf(Σ charges) off, as one `discount` line per product;
 * - for each earlier invoice this one adjusts (late usage), the discount of its coupon on the corrected period
 *   (its charges + every adjustment of it, this one's included) minus the discount already given for it (its own
 *   discount lines and those of earlier adjustments): exact whatever the rounding. That difference is split over the
 *   products this invoice adjusts, in proportion to their adjustments (what was given on other products stays).
 * `priced[i]` belongs to `periods[i]`.
 */
export async function applyDiscounts(
  q: PgPool | PgClient,
  periods: CouponSlot[],
  priced: PricedInvoice[],
): Promise<void> {
  if (periods.length === 0) return;
  await discountPeriods(q, periods, priced);
  await discountAdjustments(q, priced);
  for (const p of priced) p.amount = canonicalDecimal(sumOfLines(p.lines));
}

/** The lines a period's discount is taken on: its own charges. */
const isCharge = (l: PricedLine) =>
  l.product_id !== null && l.adjusts_invoice_id === null && ['flat', 'usage', 'minimum_commitment'].includes(l.type);

/**
 * A coupon's terms in the invoice's currency (price books: its amount_off there). Redeeming checks the coupon has an
 * amount in the subscription's currency (coupons/redeem.ts), so none is only possible for a row changed by hand: it
 * discounts nothing rather than an amount of another currency.
 */
function termsIn<T extends CouponRowTerms>(c: T, currency: string): T {
  return couponTermsIn(c, currency) ?? { ...c, amount_off: '0', currency };
}

async function discountPeriods(q: PgPool | PgClient, periods: CouponSlot[], priced: PricedInvoice[]): Promise<void> {
  // Which coupon discounts each period's invoice, if any: coupon-periods.ts.
  const covering = await couponsCovering(q, periods);
  const rows = covering.flatMap((c, i) => (c ? [{ ...c, n: String(i + 1) }] : []));
  for (const r of rows) {
    const invoice = priced[Number(r.n) - 1]!;
    const byProduct = sumByProduct(invoice.lines.filter(isCharge));
    const terms = termsIn(r, invoice.currency);
    const lines = discountLines(terms, byProduct, invoice.currency);
    // A coupon that found nothing to discount still says so: a late-usage adjustment of the period is discounted by it.
    invoice.lines.push(...(lines.length ? lines : [zeroLine(terms)]));
  }
}

async function discountAdjustments(q: PgPool | PgClient, priced: PricedInvoice[]): Promise<void> {
  const adjusted = [
    ...new Set(
      priced.flatMap((p) =>
        p.lines.flatMap((l) => (l.type === 'adjustment' && l.adjusts_invoice_id ? [l.adjusts_invoice_id] : [])),
      ),
    ),
  ];
  if (adjusted.length === 0) return;
  // The coupon that discounted each adjusted invoice's period (its own discount lines name it).
  const coupons = await couponsOfInvoices(q, adjusted);
  if (coupons.length === 0) return;
  const ids = coupons.map((c) => c.invoice_id);
  // Billed for each period so far (issued period invoices only: a draft is re-priced whole, a threshold invoice is
  // deducted by its period's invoice): its charges and adjustments, and the discount given on them.
  const billed = await billedPerProduct(q, ids);
  const couponOf = new Map(coupons.map((c) => [c.invoice_id, c]));
  const billedOf = new Map<string, typeof billed>();
  for (const b of billed) billedOf.set(b.invoice_id, [...(billedOf.get(b.invoice_id) ?? []), b]);
  for (const invoice of priced) {
    const adjusts = [
      ...new Set(
        invoice.lines.flatMap((l) => (l.type === 'adjustment' && l.adjusts_invoice_id ? [l.adjusts_invoice_id] : [])),
      ),
    ];
    for (const c of adjusts.flatMap((id) => couponOf.get(id) ?? []).map((x) => termsIn(x, invoice.currency))) {
      const now = invoice.lines.filter((l) => l.type === 'adjustment' && l.adjusts_invoice_id === c.invoice_id);
      const adjusted = sumByProduct(now);
      let charges = [...adjusted.values()].reduce((s, x) => s.plus(x), new Decimal(0));
      let given = new Decimal(0);
      for (const b of billedOf.get(c.invoice_id) ?? []) {
        if (b.kind === 'charge') charges = charges.plus(b.amount);
        else given = given.minus(b.amount);
      }
      // The discount of the corrected period minus what was given for it, on the products this adjustment bills.
      const more = discountOf(c, charges, invoice.currency).minus(given);
      if (more.isZero()) continue;
      const products = [...adjusted.keys()].sort();
      const sign = more.isNegative() ? -1 : 1;
      let weights = products.map((p) => adjusted.get(p)!.times(sign));
      if (!weights.some((x) => x.gt(0))) weights = weights.map((x) => x.abs());
      const shares = allocate(more.abs(), weights, invoice.currency);
      invoice.lines.push(
        ...products.flatMap((product_id, i) =>
          shares[i]!.isZero()
            ? []
            : [
                discountLine(
                  c,
                  product_id,
                  shares[i]!.times(-sign),
                  c.invoice_id,
                  ` on the late usage of ${c.period_start} – ${c.period_end}`,
                ),
              ],
        ),
      );
    }
  }
}

function sumByProduct(lines: PricedLine[]): Map<string, Decimal> {
  const out = new Map<string, Decimal>();
  for (const l of lines) out.set(l.product_id!, (out.get(l.product_id!) ?? new Decimal(0)).plus(l.amount));
  return out;
}

/** The discount lines of a coupon on a period's charges per product: one line per product, in product id order. */
function discountLines(c: CouponRowTerms, charges: Map<string, Decimal>, currency: string): PricedLine[] {
  const products = [...charges.keys()].sort();
  const weights = products.map((p) => charges.get(p)!);
  const total = discountOf(
    c,
    weights.reduce((s, w) => s.plus(w), new Decimal(0)),
    currency,
  );
  const shares = allocate(total, weights, currency);
  return products.flatMap((product_id, i) =>
    shares[i]!.isZero() ? [] : [discountLine(c, product_id, shares[i]!.neg(), null, '')],
  );
}

function discountLine(
  c: CouponRowTerms,
  product_id: string,
  amount: Decimal,
  adjusts: string | null,
  suffix: string,
): PricedLine {
  const text = canonicalDecimal(amount);
  return {
    type: 'discount',
    product_id,
    meter_id: null,
    description: `Discount ${c.name} (${termsLabel(c)})${suffix}`,
    quantity: '1',
    unit_price: text,
    amount: text,
    price_model: null,
    adjusts_invoice_id: adjusts,
    coupon_id: c.coupon_id,
  };
}

function zeroLine(c: CouponRowTerms): PricedLine {
  return {
    type: 'discount',
    product_id: null,
    meter_id: null,
    description: `Discount ${c.name} (${termsLabel(c)}): nothing to discount`,
    quantity: '1',
    unit_price: '0',
    amount: '0',
    price_model: null,
    adjusts_invoice_id: null,
    coupon_id: c.coupon_id,
  };
}
