import { Decimal, canonicalDecimal, formatGrouped, roundToMinorUnit } from '../../../shared/money/decimal.js';
import { priceQuantity, tierParts, type PriceModel } from '../pricing/price-models.js';

/**
 * How an invoice line's amount was reached, as sub-lines that multiply (issue 48): a graduated line is one
 * sub-line per tier it reached (quantity × unit price = amount) and one per flat fee; a volume line the tier the
 * total fell in; a package line its packages. Presentation only: the parts come from the pricing rule itself
 * (services/domain/pricing/price-models.ts tierParts), the line's amount is untouched, and Σ sub-lines = the
 * line's amount to the cent — the exact parts plus, when the line was rounded to the minor unit, a rounding
 * sub-line. A line whose stored amount the model does not give (an old or hand-made line) gets no breakdown.
 */
export interface SubLine {
  description: string;
  quantity: string | null;
  unit_price: string | null;
  amount: string;
}

export interface LineWithModel {
  type: string;
  description: string;
  quantity: string;
  amount: string;
  price_model: PriceModel | null;
}

export interface LineBreakdown {
  /** The line's description without the inline breakdown the sub-lines now show. */
  description: string;
  sub: SubLine[];
}

/** The units a tier covers: "up to 100,000", "over 100,000 up to 200,000", "over 200,000". */
const range = (from: Decimal, to: Decimal | null) =>
  to === null
    ? `over ${formatGrouped(from)}`
    : from.isZero()
      ? `up to ${formatGrouped(to)}`
      : `over ${formatGrouped(from)} up to ${formatGrouped(to)}`;

/** The sub-lines of a usage line priced by tiers or packages, or null (other lines print as they are). */
export function lineBreakdown(line: LineWithModel, currency: string): LineBreakdown | null {
  const model = line.price_model;
  if (line.type !== 'usage' || !model || (model.pricing !== 'tiered' && model.pricing !== 'package')) return null;
  const quantity = new Decimal(line.quantity);
  const sub: SubLine[] = [];
  const row = (description: string, q: Decimal, price: Decimal) =>
    sub.push({
      description,
      quantity: canonicalDecimal(q),
      unit_price: canonicalDecimal(price),
      amount: canonicalDecimal(q.times(price)),
    });
  if (model.pricing === 'package') {
    if (quantity.lte(0)) return null;
    const packages = quantity.div(model.package_size).ceil();
    row(`Packages of ${formatGrouped(new Decimal(model.package_size))}`, packages, new Decimal(model.price));
  } else {
    for (const p of tierParts(model.tiers_mode, model.tiers, quantity)) {
      const label =
        p.mode === 'volume'
          ? `All units at tier ${p.tier} (${range(p.from, p.to)})`
          : `Tier ${p.tier} (${range(p.from, p.to)})`;
      row(label, p.quantity, p.unit_price);
      if (!p.flat_price.isZero()) row(`Tier ${p.tier} flat fee`, new Decimal(1), p.flat_price);
    }
  }
  if (sub.length === 0) return null;
  const exact = sub.reduce((s, l) => s.plus(l.amount), new Decimal(0));
  const amount = new Decimal(line.amount);
  if (!roundToMinorUnit(exact, currency).eq(amount)) return null;
  if (!exact.eq(amount))
    sub.push({
      description: 'Rounding',
      quantity: null,
      unit_price: null,
      amount: canonicalDecimal(amount.minus(exact)),
    });
  const inline = priceQuantity(model, quantity, currency).breakdown;
  return { description: inline ? line.description.replace(` (${inline})`, '') : line.description, sub };
}
