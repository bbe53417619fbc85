import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { CURRENCY_CODE_MESSAGE, minorUnits, normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralsOf } from '../../../shared/money/json.js';
import { GetCreditSettingsQuery, PutCreditSettingsBody } from '../../../shared/api/credit-settings.js';
import type { WalletChange } from '../../domain/credits/wallet-store.js';

const putBody = bodyValidator<PutCreditSettingsBody>(PutCreditSettingsBody);
const getQuery = queryValidator<GetCreditSettingsQuery>(GetCreditSettingsQuery);

export const parseGetCreditSettings = (ctx: RequestContext): GetCreditSettingsQuery => getQuery.parseQuery(ctx.query);

/** The settings: the schema, then every amount exact in the currency's minor units. */
export function parsePutCreditSettings(ctx: RequestContext): WalletChange & { customerId?: string } {
  const input = putBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const currency = normalizeCurrency(input.currency);
  if (!currency) errors.push({ field: 'currency', message: CURRENCY_CODE_MESSAGE });
  const scale = currency ? minorUnits(currency) : undefined;
  const literal = numberLiteralsOf(ctx.rawBody);
  const exact = (field: string): string => {
    const r = parseAmount(literal(field.split('.')) ?? '', { maxScale: scale });
    if ('error' in r) {
      errors.push({ field, message: r.error });
      return '0';
    }
    return r.value;
  };
  const ar = input.auto_recharge;
  const autoRecharge = ar
    ? {
        enabled: ar.enabled,
        threshold: exact('auto_recharge.threshold'),
        amount: exact('auto_recharge.amount'),
        maxPerMonth: ar.max_per_month,
      }
    : null;
  const lowBalanceThreshold = input.low_balance_threshold === null ? null : exact('low_balance_threshold');
  if (errors.length) throw new ValidationError(errors);
  return { customerId: input.customer_id, currency: currency!, autoRecharge, lowBalanceThreshold };
}
