import { Decimal, canonicalDecimal, formatGrouped, roundToMinorUnit } from '../../../shared/money/decimal.js';
import type { Pricing, TiersMode } from '../../../shared/vocabulary.js';

/* ---------------------------------------------------------------------------------------------------------
 * Price models (docs/design.md §8 Product): THE maths of each pricing rule, pure functions of plain data so
 * the billing run (piscina worker), the upcoming invoice, late-usage adjustments and per-group lines all
 * price the same way. Amounts are exact until one final rounding, half away from zero, to the minor unit.
 * ------------------------------------------------------------------------------------------------------- */

/** One tier; exact decimal strings. `up_to` null: unbounded (the last tier). */
export interface Tier {
  up_to: string | null;
  unit_price: string;
  flat_price: string;
}

/** A product's price model as stored on the product and snapshotted on each usage line it priced. */
export type PriceModel =
  | { pricing: 'flat' | 'metered'; price: string }
  | { pricing: 'package'; price: string; package_size: string }
  | { pricing: 'tiered'; tiers_mode: TiersMode; tiers: Tier[] };

export interface PricedQuantity {
  /** Rounded to the currency's minor unit. */
  amount: Decimal;
  /** The price the line shows per unit: the unit price, the package price, or the (last reached) tier's. */
  unit_price: Decimal;
  /** How the amount was reached, for the line's description: "" for a plain unit price. */
  breakdown: string;
}

const ZERO = new Decimal(0);

/**
 * THE rule for a usage quantity below zero (issue 49): it prices at 0 in every model. A gauge is a level, not a
 * refund, and a histogram's sum of negative observations is no money owed back: usage never pays the customer.
 * What was billed before is given back only by an adjustment re-pricing a period at its (clamped) quantity.
 */
export function billableQuantity(quantity: Decimal): Decimal {
  return quantity.isNegative() ? ZERO : quantity;
}

/**
 * Prices `quantity` units under `model`. A quantity below zero (a gauge or histogram can report one) is priced as 0
 * (billableQuantity), whatever the model; its breakdown says so.
 * - metered: quantity × price.
 * - package: ⌈quantity / package_size⌉ packages × price.
 * - graduated tiers: each unit at the price of the tier it falls in; a reached tier adds its flat_price once.
 * - volume tiers: every unit at the price of the tier the total falls in (up_to inclusive), plus its flat_price.
 */
export function priceQuantity(model: PriceModel, measured: Decimal, currency: string): PricedQuantity {
  const round = (d: Decimal) => roundToMinorUnit(d, currency);
  const quantity = billableQuantity(measured);
  if (!quantity.eq(measured)) {
    const unit = model.pricing === 'tiered' ? model.tiers[0]!.unit_price : model.price;
    return { amount: ZERO, unit_price: new Decimal(unit), breakdown: 'below zero: priced as 0' };
  }
  switch (model.pricing) {
    case 'flat':
    case 'metered':
      return { amount: round(quantity.times(model.price)), unit_price: new Decimal(model.price), breakdown: '' };
    case 'package': {
      const packages = quantity.lte(0) ? ZERO : quantity.div(model.package_size).ceil();
      return {
        amount: round(packages.times(model.price)),
        unit_price: new Decimal(model.price),
        breakdown: `${formatGrouped(packages)} × package of ${formatGrouped(new Decimal(model.package_size))} at ${canonicalDecimal(model.price)}`,
      };
    }
    case 'tiered':
      return model.tiers_mode === 'graduated'
        ? priceGraduated(model.tiers, quantity, round)
        : priceVolume(model.tiers, quantity, round);
  }
}

function tierPart(units: Decimal, t: Tier): { amount: Decimal; text: string } {
  const flat = new Decimal(t.flat_price);
  const text =
    `${formatGrouped(units)} × ${canonicalDecimal(t.unit_price)}` +
    (flat.isZero() ? '' : ` + ${canonicalDecimal(flat)} flat`);
  return { amount: units.times(t.unit_price).plus(flat), text };
}

function priceGraduated(tiers: Tier[], quantity: Decimal, round: (d: Decimal) => Decimal): PricedQuantity {
  let total = ZERO;
  let below = ZERO;
  let unitPrice = new Decimal(tiers[0]!.unit_price);
  const parts: string[] = [];
  for (const t of tiers) {
    if (quantity.lte(below)) break;
    const top = t.up_to === null ? quantity : Decimal.min(quantity, t.up_to);
    const part = tierPart(top.minus(below), t);
    total = total.plus(part.amount);
    parts.push(part.text);
    unitPrice = new Decimal(t.unit_price);
    if (t.up_to === null) break;
    below = new Decimal(t.up_to);
  }
  return {
    amount: round(total),
    unit_price: unitPrice,
    breakdown: parts.length ? `graduated: ${parts.join(' + ')}` : 'graduated: no tier reached',
  };
}

function priceVolume(tiers: Tier[], quantity: Decimal, round: (d: Decimal) => Decimal): PricedQuantity {
  if (quantity.lte(0))
    return { amount: ZERO, unit_price: new Decimal(tiers[0]!.unit_price), breakdown: 'volume: no tier reached' };
  const i = tiers.findIndex((t) => t.up_to === null || quantity.lte(t.up_to));
  const t = tiers[i]!;
  const part = tierPart(quantity, t);
  const range =
    t.up_to === null
      ? `above ${formatGrouped(new Decimal(tiers[i - 1]?.up_to ?? 0))}`
      : `up to ${formatGrouped(new Decimal(t.up_to))}`;
  return {
    amount: round(part.amount),
    unit_price: new Decimal(t.unit_price),
    breakdown: `volume (tier ${i + 1}, ${range}): ${part.text}`,
  };
}

/** Minimum commitment: what tops an item's priced usage up to its per-period minimum (0 when reached). */
export function minimumTrueUp(usageAmount: Decimal, minimum: string | null, currency: string): Decimal {
  if (minimum === null) return ZERO;
  const short = roundToMinorUnit(minimum, currency).minus(usageAmount);
  return short.gt(0) ? short : ZERO;
}

/** A product's price columns (products table), as every reader selects them. */
export interface ProductPriceRow {
  pricing: Pricing;
  price: string;
  tiers_mode: TiersMode | null;
  tiers: Tier[] | null;
  package_size: string | null;
}

/** The price model a product row describes. */
export function priceModelOf(row: ProductPriceRow): PriceModel {
  if (row.pricing === 'tiered') return { pricing: 'tiered', tiers_mode: row.tiers_mode!, tiers: row.tiers! };
  if (row.pricing === 'package') return { pricing: 'package', price: row.price, package_size: row.package_size! };
  return { pricing: row.pricing, price: row.price };
}
