import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { CURRENCY_CODE_MESSAGE, minorUnits, normalizeCurrency } from '../../../shared/money/currencies.js';
import { Decimal, parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralsOf } from '../../../shared/money/json.js';
import { CreateAlertBody, ListAlertsQuery } from '../../../shared/api/alerts.js';
import type { NewAlert } from '../../domain/alerts/types.js';

/** Alerts' one validation place: the schema, then which metric, the currency, exact positive thresholds. */
const createBody = bodyValidator<CreateAlertBody>(CreateAlertBody);
const listQuery = queryValidator<ListAlertsQuery>(ListAlertsQuery);

export const parseListAlerts = (ctx: RequestContext): ListAlertsQuery => listQuery.parseQuery(ctx.query);

export function parseNewAlert(ctx: RequestContext): NewAlert {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const metric = input.metric ?? (input.currency !== undefined && input.meter_id === undefined ? 'amount' : 'usage');
  let currency: string | null = null;
  if (metric === 'usage') {
    if (input.meter_id === undefined) errors.push({ field: 'meter_id', message: 'is required for a usage alert' });
    if (input.currency !== undefined) errors.push({ field: 'currency', message: 'is only for amount alerts' });
  } else {
    if (input.meter_id !== undefined) errors.push({ field: 'meter_id', message: 'is only for usage alerts' });
    if (input.currency === undefined) errors.push({ field: 'currency', message: 'is required for an amount alert' });
    else if (!(currency = normalizeCurrency(input.currency)))
      errors.push({ field: 'currency', message: CURRENCY_CODE_MESSAGE });
  }
  // Exact digits as the client wrote them; amounts at most the currency's minor unit.
  const literal = numberLiteralsOf(ctx.rawBody);
  const maxScale = currency ? minorUnits(currency) : undefined;
  const thresholds = new Map<string, Decimal>();
  input.thresholds.forEach((_, i) => {
    const parsed = parseAmount(literal(['thresholds', i]) ?? '', { maxScale });
    if ('error' in parsed) errors.push({ field: `thresholds[${i}]`, message: parsed.error });
    else if (new Decimal(parsed.value).lte(0))
      errors.push({ field: `thresholds[${i}]`, message: 'must be greater than 0' });
    else thresholds.set(parsed.value, new Decimal(parsed.value));
  });
  if (errors.length) throw new ValidationError(errors);
  return {
    customerId: input.customer_id,
    metric,
    meterId: input.meter_id ?? null,
    currency,
    thresholds: [...thresholds].sort(([, x], [, y]) => x.comparedTo(y)).map(([text]) => text),
  };
}
