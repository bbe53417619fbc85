import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { hasControlCharacter } from '../../../shared/strings.js';
import { CURRENCY_CODE_MESSAGE, minorUnits, normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt, numberLiteralsOf } from '../../../shared/money/json.js';
import type { CouponCurrencyOptions } from '../../domain/pricing/price-books.js';
import { CreateCouponBody, ListCouponsQuery } from '../../../shared/api/coupons.js';
import type { NewCoupon } from '../../domain/coupons/types.js';

/** Coupons' one validation place: the schema, then the exact terms, the duration's periods, a future expiry. */
const createBody = bodyValidator<CreateCouponBody>(CreateCouponBody);
const listQuery = queryValidator<ListCouponsQuery>(ListCouponsQuery);

/** Percentages exact to 4 decimal places, as tax rates. */
export const PERCENT_SCALE = 4;

export const parseListCoupons = (ctx: RequestContext): ListCouponsQuery => listQuery.parseQuery(ctx.query);

export function parseNewCoupon(ctx: RequestContext, now = new Date()): NewCoupon {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const name = input.name.trim();
  if (!name || hasControlCharacter(name)) errors.push({ field: 'name', message: 'must be printable and not blank' });
  let percent_off: string | null = null;
  let amount_off: string | null = null;
  let currency: string | null = null;
  if ((input.percent_off === undefined) === (input.amount_off === undefined))
    errors.push({ field: 'percent_off', message: 'give exactly one of percent_off or amount_off' });
  if (input.percent_off !== undefined) {
    const r = parseAmount(numberLiteralAt(ctx.rawBody, 'percent_off') ?? '', { maxScale: PERCENT_SCALE });
    if ('error' in r) errors.push({ field: 'percent_off', message: r.error });
    else percent_off = r.value;
    if (input.currency !== undefined) errors.push({ field: 'currency', message: 'only with amount_off' });
  }
  if (input.amount_off !== undefined) {
    currency = input.currency === undefined ? null : normalizeCurrency(input.currency);
    if (input.currency === undefined) errors.push({ field: 'currency', message: 'required with amount_off' });
    else if (!currency) errors.push({ field: 'currency', message: CURRENCY_CODE_MESSAGE });
    const r = parseAmount(numberLiteralAt(ctx.rawBody, 'amount_off') ?? '', {
      maxScale: currency ? minorUnits(currency) : undefined,
    });
    if ('error' in r) errors.push({ field: 'amount_off', message: r.error });
    else amount_off = r.value;
  }
  const currency_options = checkCurrencyOptions(ctx, input, currency, errors);
  if ((input.duration === 'repeating') !== (input.duration_in_periods !== undefined))
    errors.push({
      field: 'duration_in_periods',
      message: input.duration === 'repeating' ? 'required with duration "repeating"' : 'only with duration "repeating"',
    });
  const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at);
  if (expiresAt && !(expiresAt.getTime() > now.getTime()))
    errors.push({ field: 'expires_at', message: 'must be in the future' });
  if (errors.length) throw new ValidationError(errors);
  return {
    name,
    percent_off,
    amount_off,
    currency,
    currency_options,
    duration: input.duration,
    duration_in_periods: input.duration_in_periods ?? null,
    max_redemptions: input.max_redemptions ?? null,
    expires_at: expiresAt,
  };
}

/**
 * Price books: an amount_off coupon's amount in other currencies, each an ISO 4217 code (any case, stored upper) other
 * than `currency`, the amount exact to that currency's minor unit. Not with percent_off (a percentage has no currency).
 */
function checkCurrencyOptions(
  ctx: RequestContext,
  input: CreateCouponBody,
  currency: string | null,
  errors: FieldError[],
): CouponCurrencyOptions {
  const out: CouponCurrencyOptions = {};
  if (input.currency_options === undefined) return out;
  if (input.amount_off === undefined) {
    errors.push({ field: 'currency_options', message: 'only with amount_off' });
    return out;
  }
  const literal = numberLiteralsOf(ctx.rawBody);
  for (const key of Object.keys(input.currency_options)) {
    const field = `currency_options.${key}`;
    const code = normalizeCurrency(key);
    if (!code) errors.push({ field, message: CURRENCY_CODE_MESSAGE });
    else if (code === currency || Object.hasOwn(out, code))
      errors.push({ field, message: `repeats ${code}: give each currency once (currency is ${currency})` });
    if (!code || errors.some((e) => e.field === field)) continue;
    const r = parseAmount(literal(['currency_options', key, 'amount_off']) ?? '', { maxScale: minorUnits(code) });
    if ('error' in r) errors.push({ field: `${field}.amount_off`, message: r.error });
    else out[code] = { amount_off: r.value };
  }
  return out;
}
