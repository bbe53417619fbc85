import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { CURRENCY_CODE_MESSAGE, minorUnits, normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt } from '../../../shared/money/json.js';
import { CreateCreditTopUpBody } from '../../../shared/api/credit-top-ups.js';

/** A top-up request: the schema, then the exact amount in the currency's minor units (when the currency is given). */
export interface TopUpInput {
  customerId?: string;
  amount: string;
  currency?: string;
}

const createBody = bodyValidator<CreateCreditTopUpBody>(CreateCreditTopUpBody);

export function parseTopUp(ctx: RequestContext): TopUpInput {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const currency = input.currency === undefined ? undefined : normalizeCurrency(input.currency);
  if (currency === null) errors.push({ field: 'currency', message: CURRENCY_CODE_MESSAGE });
  const amount = parseAmount(numberLiteralAt(ctx.rawBody, 'amount') ?? '', {
    maxScale: currency ? minorUnits(currency) : undefined,
  });
  if ('error' in amount) errors.push({ field: 'amount', message: amount.error });
  if (errors.length) throw new ValidationError(errors);
  return {
    customerId: input.customer_id,
    amount: (amount as { value: string }).value,
    currency: currency ?? undefined,
  };
}

/** The amount in the currency resolved after parsing (the customer's default): at most its minor-unit decimals. */
export function checkAmountScale(amount: string, currency: string): void {
  const parsed = parseAmount(amount, { maxScale: minorUnits(currency) });
  if ('error' in parsed) throw new ValidationError([{ field: 'amount', message: `${parsed.error} (${currency})` }]);
}
