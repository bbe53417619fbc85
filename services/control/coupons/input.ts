import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { hasControlCharacter } from '../../../shared/strings.js';
import { CURRENCY_CODE_MESSAGE, minorUnits, normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt } from '../../../shared/money/json.js';
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
    duration: input.duration,
    duration_in_periods: input.duration_in_periods ?? null,
    max_redemptions: input.max_redemptions ?? null,
    expires_at: expiresAt,
  };
}
