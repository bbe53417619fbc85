import type { FieldError } from '../../../shared/errors.js';
import { Decimal, parseAmount } from '../../../shared/money/decimal.js';
import type { PriceModel, Tier } from '../../domain/pricing/price-models.js';
import type { PriceModelInput } from '../../../shared/api/subscriptions.js';

/**
 * A price model's fields as the client wrote them, checked the one way for a product and for a subscription or plan
 * item's per-dimension prices (issue 46): amounts are read digit for digit from the request body (never through a
 * float), tiers ascend, only the last one is unbounded. Problems are pushed as field errors under the model's path.
 */

/** A path into the body: ['items', 0, 'prices', 1, 'price'] → "items[0].prices[1].price". */
export function fieldOf(path: readonly (string | number)[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i ? `.${k}` : k)).join('');
}

/** The literal of a number at a path of the body (shared/money/json.ts numberLiteralsOf). */
export type LiteralAt = (path: (string | number)[]) => string | undefined;

/** A decimal field exactly as the client wrote it (the schema already checked it is a number ≥ 0). */
export function checkAmount(
  literal: string | undefined,
  path: (string | number)[],
  errors: FieldError[],
  opts: { positive?: boolean } = {},
): string | undefined {
  const field = fieldOf(path);
  if (literal === undefined) {
    errors.push({ field, message: 'must be a number' });
    return undefined;
  }
  const r = parseAmount(literal);
  if ('error' in r) errors.push({ field, message: r.error });
  else if (opts.positive && new Decimal(r.value).isZero()) errors.push({ field, message: 'must be greater than 0' });
  else return r.value;
  return undefined;
}

/** Tiers ascending by up_to, only the last one unbounded (null); prices exact. `at`: the tiers' parent's path. */
export function checkTiers(
  tiers: { up_to: number | null; unit_price: number; flat_price?: number }[],
  amount: (path: (string | number)[], opts?: { positive?: boolean }) => string | undefined,
  errors: FieldError[],
  at: (string | number)[] = [],
): Tier[] {
  let below: Decimal | null = new Decimal(0);
  return tiers.map((t, i) => {
    const tier = fieldOf([...at, 'tiers', i]);
    const last = i === tiers.length - 1;
    let upTo: string | null = null;
    if (t.up_to === null) {
      if (!last) errors.push({ field: `${tier}.up_to`, message: 'may be null on the last tier only' });
    } else {
      upTo = amount([...at, 'tiers', i, 'up_to'], { positive: true }) ?? null;
      if (last)
        errors.push({ field: `${tier}.up_to`, message: 'must be null on the last tier (it has no upper bound)' });
      else if (upTo !== null && below !== null && new Decimal(upTo).lte(below)) {
        errors.push({
          field: `${tier}.up_to`,
          message: `must be greater than the previous tier's up_to (${below.toFixed()})`,
        });
      }
    }
    below = upTo === null ? null : new Decimal(upTo);
    return {
      up_to: upTo,
      unit_price: amount([...at, 'tiers', i, 'unit_price']) ?? '0',
      flat_price: t.flat_price === undefined ? '0' : (amount([...at, 'tiers', i, 'flat_price']) ?? '0'),
    };
  });
}

/**
 * A usage price model (metered, tiered or package) at `at` of the body: `price` for metered and package,
 * `tiers_mode` and `tiers` exactly for tiered, `package_size` exactly for package.
 */
export function checkPriceModel(
  input: PriceModelInput,
  at: (string | number)[],
  literal: LiteralAt,
  errors: FieldError[],
): PriceModel {
  const amount = (path: (string | number)[], opts: { positive?: boolean } = {}) =>
    checkAmount(literal(path), path, errors, opts);
  const field = (k: string) => fieldOf([...at, k]);
  const only = (k: 'price' | 'tiers' | 'tiers_mode' | 'package_size', ok: boolean, why: string) => {
    if (input[k] !== undefined && !ok) errors.push({ field: field(k), message: why });
  };
  only('tiers', input.pricing === 'tiered', 'is only for tiered pricing');
  only('tiers_mode', input.pricing === 'tiered', 'is only for tiered pricing');
  only('package_size', input.pricing === 'package', 'is only for package pricing');
  only('price', input.pricing !== 'tiered', 'must be omitted for tiered pricing: the tiers carry the prices');
  if (input.pricing === 'tiered') {
    if (!input.tiers_mode) errors.push({ field: field('tiers_mode'), message: 'is required for tiered pricing' });
    if (!input.tiers) errors.push({ field: field('tiers'), message: 'is required for tiered pricing' });
    const tiers = input.tiers ? checkTiers(input.tiers, amount, errors, at) : [];
    return { pricing: 'tiered', tiers_mode: input.tiers_mode ?? 'graduated', tiers };
  }
  const price = input.price === undefined ? undefined : amount([...at, 'price']);
  if (input.price === undefined) errors.push({ field: field('price'), message: 'is required' });
  if (input.pricing === 'package') {
    if (input.package_size === undefined)
      errors.push({ field: field('package_size'), message: 'is required for package pricing' });
    const size = input.package_size === undefined ? undefined : amount([...at, 'package_size'], { positive: true });
    return { pricing: 'package', price: price ?? '0', package_size: size ?? '1' };
  }
  return { pricing: 'metered', price: price ?? '0' };
}
