import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { CURRENCY_CODE_MESSAGE, minorUnits, normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt } from '../../../shared/money/json.js';
import { CreateCreditGrantBody, ListCreditGrantsQuery } from '../../../shared/api/credits.js';
import type { NewCreditGrant } from '../../domain/credits/types.js';

/** Credits' one validation place: the schema, then the exact amount in the currency's minor units, a future expiry. */
const createBody = bodyValidator<CreateCreditGrantBody>(CreateCreditGrantBody);
const listQuery = queryValidator<ListCreditGrantsQuery>(ListCreditGrantsQuery);

export const parseListCreditGrants = (ctx: RequestContext): ListCreditGrantsQuery => listQuery.parseQuery(ctx.query);

export function parseNewCreditGrant(ctx: RequestContext, now = new Date()): NewCreditGrant {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const currency = normalizeCurrency(input.currency);
  if (!currency) errors.push({ field: 'currency', message: CURRENCY_CODE_MESSAGE });
  const amount = parseAmount(numberLiteralAt(ctx.rawBody, 'amount') ?? '', {
    maxScale: currency ? minorUnits(currency) : undefined,
  });
  if ('error' in amount) errors.push({ field: 'amount', message: amount.error });
  const expiresAt = input.expires_at === undefined ? null : new Date(input.expires_at);
  if (expiresAt && !(expiresAt.getTime() > now.getTime()))
    errors.push({ field: 'expires_at', message: 'must be in the future' });
  if ((input.account_id === undefined) === (input.customer_id === undefined))
    errors.push({ field: 'account_id', message: 'give exactly one of account_id or customer_id' });
  const description = input.description.trim();
  if (!description) errors.push({ field: 'description', message: 'must not be blank' });
  if (errors.length) throw new ValidationError(errors);
  return {
    accountId: input.account_id,
    customerId: input.customer_id,
    amount: (amount as { value: string }).value,
    currency: currency!,
    expiresAt,
    description,
  };
}
