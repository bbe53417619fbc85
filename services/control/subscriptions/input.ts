import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { numberLiteralsOf } from '../../../shared/money/json.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import {
  CreateSubscriptionBody,
  ListSubscriptionsQuery,
  UpdateSubscriptionBody,
  type ItemInput,
} from '../../../shared/api/subscriptions.js';
import type { ItemRequest } from '../../domain/subscriptions/types.js';

/**
 * Subscriptions' one validation place for the request's shape. Whether the items make sense (products exist,
 * meters belong to the account, one currency) depends on the database: `resolveItems` (items.ts) checks
 * that inside the write's transaction and reports it the same way, field by field.
 */
const createBody = bodyValidator<CreateSubscriptionBody>(CreateSubscriptionBody);
const updateBody = bodyValidator<UpdateSubscriptionBody>(UpdateSubscriptionBody);
const listQuery = queryValidator<ListSubscriptionsQuery>(ListSubscriptionsQuery);

export const parseListSubscriptions = (ctx: RequestContext): ListSubscriptionsQuery => listQuery.parseQuery(ctx.query);

export interface NewSubscription {
  items: ItemRequest[];
  /** Operator mode: the customer subscribed (accountActedFor checks the caller may). */
  customerId?: string;
}
export interface SubscriptionChange {
  items?: ItemRequest[];
  status?: 'canceled';
}

export function parseNewSubscription(ctx: RequestContext): NewSubscription {
  const input = createBody.parse(ctx.body);
  return { items: exactItems(ctx, input.items), customerId: input.customer_id };
}

export function parseSubscriptionChange(ctx: RequestContext): SubscriptionChange {
  const input = updateBody.parse(ctx.body);
  if (input.items === undefined && input.status === undefined)
    throw new ValidationError([{ field: '', message: 'must contain items or status' }]);
  return { ...input, items: input.items && exactItems(ctx, input.items) };
}

/** Items with each minimum_amount as the exact digits the client wrote (≤ 9 decimals). */
function exactItems(ctx: RequestContext, items: ItemInput[]): ItemRequest[] {
  const literal = numberLiteralsOf(ctx.rawBody);
  const errors: { field: string; message: string }[] = [];
  const out = items.map(({ minimum_amount, ...item }, i): ItemRequest => {
    if (minimum_amount === undefined) return item;
    const r = parseAmount(literal(['items', i, 'minimum_amount']) ?? '');
    if ('error' in r) errors.push({ field: `items[${i}].minimum_amount`, message: r.error });
    return { ...item, minimum_amount: 'value' in r ? r.value : '0' };
  });
  if (errors.length) throw new ValidationError(errors);
  return out;
}
