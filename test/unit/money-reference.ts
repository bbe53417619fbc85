/**
 * An independent reference for the property tests of the invoice-amount pipeline: exact rationals of BigInt
 * (numerator/denominator), nothing of decimal.js or of the code under test. Amounts are integers of the currency's
 * minor unit; rates are percentages with up to 4 decimals.
 */
export interface Q {
  n: bigint;
  d: bigint;
}

const gcd = (a: bigint, b: bigint): bigint => {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y) [x, y] = [y, x % y];
  return x || 1n;
};

export function q(n: bigint, d = 1n): Q {
  if (d === 0n) throw new Error('division by zero');
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d);
  return { n: n / g, d: d / g };
}
export const add = (a: Q, b: Q) => q(a.n * b.d + b.n * a.d, a.d * b.d);
export const sub = (a: Q, b: Q) => q(a.n * b.d - b.n * a.d, a.d * b.d);
export const mul = (a: Q, b: Q) => q(a.n * b.n, a.d * b.d);
export const div = (a: Q, b: Q) => q(a.n * b.d, a.d * b.n);

/** Rounds half away from zero to an integer (the invoice rule for lines and tax). */
export function roundHalfAway(x: Q): bigint {
  const neg = x.n < 0n;
  const n = neg ? -x.n : x.n;
  const r = (2n * n + x.d) / (2n * x.d);
  return neg ? -r : r;
}

/** Floor of a non-negative rational. */
export const floorQ = (x: Q) => (x.n >= 0n ? x.n / x.d : -((-x.n + x.d - 1n) / x.d));

/** "12.345" with `scale` decimals → minor units (12345n); throws when finer than the unit. */
export function toMinor(text: string, scale: number): bigint {
  const neg = text.startsWith('-');
  const [int, frac = ''] = (neg ? text.slice(1) : text).split('.');
  if (frac.length > scale && /[1-9]/.test(frac.slice(scale))) throw new Error(`${text} is finer than 10^-${scale}`);
  const v = BigInt(int! + frac.slice(0, scale).padEnd(scale, '0'));
  return neg ? -v : v;
}

/** Minor units → canonical decimal text ("12.3", "-0.05", "1200"). */
export function fromMinor(v: bigint, scale: number): string {
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  const text = frac ? `${int}.${frac}` : int;
  return neg && text !== '0' ? `-${text}` : text;
}

/** A percentage text ("19", "7.25") as a rational fraction (0.19, 0.0725). */
export function percent(text: string): Q {
  const [int, frac = ''] = text.split('.');
  return q(BigInt(int! + frac), 100n * 10n ** BigInt(frac.length));
}

/**
 * Splits `total` (≥ 0, minor units) over `weights` (negative weigh 0) in proportion, each share rounded down and
 * the units left to the largest remainders, ties to the first: the documented rule for discounts.
 */
export function largestRemainder(total: bigint, weights: readonly bigint[]): bigint[] {
  const w = weights.map((x) => (x > 0n ? x : 0n));
  const sum = w.reduce((s, x) => s + x, 0n);
  if (sum === 0n || total === 0n) return w.map(() => 0n);
  const shares = w.map((x) => (total * x) / sum);
  const rests = w.map((x, i) => ({ i, rest: total * x - shares[i]! * sum }));
  let left = total - shares.reduce((s, x) => s + x, 0n);
  rests.sort((a, b) => (b.rest > a.rest ? 1 : b.rest < a.rest ? -1 : a.i - b.i));
  for (const { i } of rests) {
    if (left <= 0n) break;
    shares[i]! += 1n;
    left -= 1n;
  }
  return shares;
}

/** A line's tax at each rate on its taxable amount (minor units): inclusive extracted, exclusive added on the rest. */
export function referenceLineTaxes(base: bigint, rates: readonly { pct: Q; inclusive: boolean }[]): bigint[] {
  const incSum = rates.filter((r) => r.inclusive).reduce((s, r) => add(s, r.pct), q(0n));
  const included = rates.map((r) => (r.inclusive ? roundHalfAway(div(mul(q(base), r.pct), add(q(1n), incSum))) : 0n));
  const net = base - included.reduce((s, x) => s + x, 0n);
  return rates.map((r, i) => (r.inclusive ? included[i]! : roundHalfAway(mul(q(net), r.pct))));
}

/** A decimal text ("0.0015", "12") as an exact rational. */
export function decimalQ(text: string): Q {
  const [int, frac = ''] = text.split('.');
  return q(BigInt(int! + frac), 10n ** BigInt(frac.length));
}

/** A price model as the reference reads it (the shape of services/domain/pricing/price-models.ts PriceModel). */
export type RefModel =
  | { pricing: 'metered'; price: string }
  | { pricing: 'package'; price: string; package_size: string }
  | {
      pricing: 'tiered';
      tiers_mode: 'graduated' | 'volume';
      tiers: { up_to: string | null; unit_price: string; flat_price: string }[];
    };

const ceilQ = (x: Q) => -floorQ(q(-x.n, x.d));
const minQ = (a: Q, b: Q) => (a.n * b.d <= b.n * a.d ? a : b);
const lteQ = (a: Q, b: Q) => a.n * b.d <= b.n * a.d;

/**
 * The amount (minor units, rounded once, half away from zero) of `quantity` (≥ 0) under a price model, written from
 * the documented rules (docs/billing.md "Price models"): metered quantity × price; package ⌈quantity / size⌉ × price;
 * graduated each unit at its tier's price plus each reached tier's flat price; volume every unit at the price of the
 * tier the total falls in (up_to inclusive) plus its flat price; nothing for 0 units of a tiered model.
 */
export function referencePrice(model: RefModel, quantity: Q, scale: number): bigint {
  const unit = q(10n ** BigInt(scale));
  let exact: Q;
  if (model.pricing === 'metered') exact = mul(quantity, decimalQ(model.price));
  else if (model.pricing === 'package')
    exact = mul(q(ceilQ(div(quantity, decimalQ(model.package_size)))), decimalQ(model.price));
  else if (quantity.n === 0n) exact = q(0n);
  else if (model.tiers_mode === 'volume') {
    const tier = model.tiers.find((t) => t.up_to === null || lteQ(quantity, decimalQ(t.up_to)))!;
    exact = add(mul(quantity, decimalQ(tier.unit_price)), decimalQ(tier.flat_price));
  } else {
    exact = q(0n);
    let below = q(0n);
    for (const t of model.tiers) {
      if (lteQ(quantity, below)) break;
      const top = t.up_to === null ? quantity : minQ(quantity, decimalQ(t.up_to));
      exact = add(exact, add(mul(sub(top, below), decimalQ(t.unit_price)), decimalQ(t.flat_price)));
      if (t.up_to === null) break;
      below = decimalQ(t.up_to);
    }
  }
  return roundHalfAway(mul(exact, unit));
}
