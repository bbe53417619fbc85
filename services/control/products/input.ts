import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt } from '../../../shared/money/json.js';

/** Field checks the JSON schema can't express: blank names, exact price digits, ISO 4217 membership. */
export function checkName(name: string | undefined, errors: FieldError[]): string | undefined {
  if (name === undefined) return undefined;
  const trimmed = name.trim();
  if (!trimmed) errors.push({ field: 'name', message: 'must not be blank' });
  return trimmed;
}

/** The price exactly as the client wrote it (the schema already checked it is a number ≥ 0). */
export function checkPrice(ctx: RequestContext, present: boolean, errors: FieldError[]): string | undefined {
  if (!present) return undefined;
  const literal = numberLiteralAt(ctx.rawBody, 'price');
  if (literal === undefined) {
    errors.push({ field: 'price', message: 'must be a number' });
    return undefined;
  }
  const r = parseAmount(literal);
  if ('error' in r) {
    errors.push({ field: 'price', message: r.error });
    return undefined;
  }
  return r.value;
}

export function checkCurrency(code: string, errors: FieldError[]): string {
  const c = normalizeCurrency(code);
  if (!c) errors.push({ field: 'currency', message: 'must be an ISO 4217 currency code' });
  return c ?? code;
}

export function throwIfAny(errors: FieldError[]): void {
  if (errors.length) throw new ValidationError(errors);
}
