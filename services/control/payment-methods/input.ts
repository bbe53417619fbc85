import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator, toFieldErrors } from '../../../shared/http/validation.js';
import { checkCard, type ValidCard } from '../../domain/payment-methods/card.js';
import { CreatePaymentMethodBody, ListPaymentMethodsQuery } from '../../../shared/api/payment-methods.js';

/** Payment methods' one validation place: the schema's shape errors plus the card rules (card.ts). */
const createBody = bodyValidator<unknown>(CreatePaymentMethodBody);
const listQuery = queryValidator<ListPaymentMethodsQuery>(ListPaymentMethodsQuery);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const parseListPaymentMethods = (ctx: RequestContext): ListPaymentMethodsQuery =>
  listQuery.parseQuery(ctx.query);

/** A new payment method: raw card details (checked by card.ts), or a processor's token (`pm_…`). */
export type NewPaymentMethod = { kind: 'card'; card: ValidCard } | { kind: 'token'; token: string };

/** Shape errors from the schema, then exactly one of `card` / `payment_method`, then the card rules. */
export function parseNewPaymentMethod(body: unknown, now = new Date()): NewPaymentMethod {
  if (body === undefined) createBody.parse(body); // throws "a JSON body is required"
  if (isObject(body) && body.card === undefined && body.payment_method === undefined)
    throw new ValidationError([{ field: 'card', message: 'one of card or payment_method is required' }]);
  if (isObject(body) && body.card !== undefined && body.payment_method !== undefined)
    throw new ValidationError([{ field: 'payment_method', message: 'give card or payment_method, not both' }]);
  if (isObject(body) && typeof body.payment_method === 'string') {
    if (!createBody.check(body)) throw new ValidationError(toFieldErrors(createBody.check.errors));
    return { kind: 'token', token: body.payment_method };
  }
  return { kind: 'card', card: parseNewCard(body, now) };
}

/** Shape errors from the schema plus the card rules, one error per field, never echoing card data. */
export function parseNewCard(body: unknown, now = new Date()): ValidCard {
  if (body === undefined) createBody.parse(body); // throws "a JSON body is required"
  const schemaErrors = createBody.check(body) ? [] : toFieldErrors(createBody.check.errors);
  const reported = new Set(schemaErrors.map((e) => e.field));
  const semantic = isObject(body) && isObject(body.card) ? checkCard(body.card, now, 'card', reported) : { errors: [] };
  const errors = [...schemaErrors, ...semantic.errors.filter((e) => !reported.has(e.field))];
  if (errors.length || !('card' in semantic) || !semantic.card) throw new ValidationError(errors);
  return semantic.card;
}
