import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { CreateSubscriptionBody, ListSubscriptionsQuery, UpdateSubscriptionBody } from './schemas.js';

/**
 * Subscriptions' one validation place for the request's shape. Whether the items make sense (products exist,
 * meters belong to the account, one currency) depends on the database: `resolveItems` (items.ts) checks
 * that inside the write's transaction and reports it the same way, field by field.
 */
const createBody = bodyValidator<CreateSubscriptionBody>(CreateSubscriptionBody);
const updateBody = bodyValidator<UpdateSubscriptionBody>(UpdateSubscriptionBody);
const listQuery = queryValidator<ListSubscriptionsQuery>(ListSubscriptionsQuery);

export const parseListSubscriptions = (ctx: RequestContext): ListSubscriptionsQuery => listQuery.parseQuery(ctx.query);

export const parseNewSubscription = (ctx: RequestContext): CreateSubscriptionBody => createBody.parse(ctx.body);

export function parseSubscriptionChange(ctx: RequestContext): UpdateSubscriptionBody {
  const input = updateBody.parse(ctx.body);
  if (input.items === undefined && input.status === undefined) throw new ValidationError([{ field: '', message: 'must contain items or status' }]);
  return input;
}
