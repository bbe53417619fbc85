import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { numberLiteralsOf } from '../../../shared/money/json.js';
import { Decimal, parseAmount } from '../../../shared/money/decimal.js';
import {
  CreateSubscriptionBody,
  ListSubscriptionsQuery,
  UpdateSubscriptionBody,
  type ItemInput,
} from '../../../shared/api/subscriptions.js';
import type { ItemRequest, SubscriptionTerms } from '../../domain/subscriptions/types.js';
import type { DimensionPrices } from '../../domain/pricing/dimension-prices.js';
import type { FieldError } from '../../../shared/errors.js';
import { checkPriceModel, type LiteralAt } from '../products/price-model-input.js';

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
  /** Empty when `plan` is given: the plan version's items. */
  items: ItemRequest[];
  /** Subscribing to a plan (docs/plans.md): its version (undefined: the latest). */
  plan?: { id: string; version?: number };
  /** Exact decimal text; null: none. */
  billingThreshold: string | null;
  /** Operator mode: the customer subscribed (accountActedFor checks the caller may). */
  customerId?: string;
  /** Admin only: the coupon applied from the first period (docs/coupons.md). */
  couponId?: string | null;
  /** Interval, count, anchor, trial (services/domain/subscriptions/periods.ts billingStart). */
  terms: SubscriptionTerms;
}
export interface SubscriptionChange {
  items?: ItemRequest[];
  status?: 'canceled';
  /** true: cancel at the current period's end; false: undo that; absent leaves it. */
  cancelAtPeriodEnd?: boolean;
  /** true: pause collection from now; false: resume; absent leaves it. */
  pauseCollection?: boolean;
  /** Exact decimal text; null removes it; absent leaves it. */
  billingThreshold?: string | null;
  /** Admin only: the coupon applied from the current period on; null removes it; absent leaves it. */
  couponId?: string | null;
  /** A promotion code redeemed on the subscription (any token that may change it): its coupon, as couponId. */
  promotionCode?: string;
}

export function parseNewSubscription(ctx: RequestContext): NewSubscription {
  const input = createBody.parse(ctx.body);
  if (input.items === undefined && input.plan_id === undefined)
    throw new ValidationError([{ field: 'items', message: 'is required (or plan_id: a plan’s items)' }]);
  if (input.items !== undefined && input.plan_id !== undefined)
    throw new ValidationError([
      { field: 'plan_id', message: 'is not allowed with items (a plan’s subscription gets its version’s items)' },
    ]);
  if (input.plan_version !== undefined && input.plan_id === undefined)
    throw new ValidationError([{ field: 'plan_version', message: 'requires plan_id' }]);
  return {
    items: input.items ? exactItems(ctx, input.items) : [],
    plan: input.plan_id === undefined ? undefined : { id: input.plan_id, version: input.plan_version },
    customerId: input.customer_id,
    billingThreshold: exactThreshold(ctx, input.billing_threshold) ?? null,
    couponId: input.coupon_id,
    terms: termsOf(input),
  };
}

function termsOf(input: CreateSubscriptionBody): SubscriptionTerms {
  if (input.trial_end !== undefined && input.trial_days !== undefined)
    throw new ValidationError([{ field: 'trial_days', message: 'must not be given with trial_end' }]);
  const trialEnd = input.trial_end === undefined ? undefined : new Date(input.trial_end);
  if (trialEnd && Number.isNaN(trialEnd.getTime()))
    throw new ValidationError([{ field: 'trial_end', message: 'must be an RFC 3339 date-time' }]);
  return {
    interval: input.interval,
    interval_count: input.interval_count,
    billing_anchor: input.billing_anchor,
    trial_end: trialEnd,
    trial_days: input.trial_days,
  };
}

export function parseSubscriptionChange(ctx: RequestContext): SubscriptionChange {
  const input = updateBody.parse(ctx.body);
  if (
    input.items === undefined &&
    input.status === undefined &&
    input.cancel_at_period_end === undefined &&
    input.pause_collection === undefined &&
    input.billing_threshold === undefined &&
    input.coupon_id === undefined &&
    input.promotion_code === undefined
  )
    throw new ValidationError([
      {
        field: '',
        message:
          'must contain items, status, cancel_at_period_end, pause_collection, billing_threshold, coupon_id or promotion_code',
      },
    ]);
  if (input.coupon_id !== undefined && input.promotion_code !== undefined)
    throw new ValidationError([{ field: 'promotion_code', message: 'cannot be sent with coupon_id' }]);
  return {
    items: input.items && exactItems(ctx, input.items),
    status: input.status,
    cancelAtPeriodEnd: input.cancel_at_period_end,
    pauseCollection: input.pause_collection === undefined ? undefined : input.pause_collection !== null,
    billingThreshold: exactThreshold(ctx, input.billing_threshold),
    couponId: input.coupon_id,
    promotionCode: input.promotion_code,
  };
}

/** The threshold's amount as the exact digits the client wrote (its scale is checked against the currency later). */
function exactThreshold(ctx: RequestContext, t: { amount: number } | null | undefined): string | null | undefined {
  if (t === undefined || t === null) return t;
  const literal = numberLiteralsOf(ctx.rawBody)(['billing_threshold', 'amount']);
  const fail = (message: string) => new ValidationError([{ field: 'billing_threshold.amount', message }]);
  if (literal === undefined) throw fail('must be a decimal number');
  // The schema took a JSON number: its digits parse.
  if (new Decimal(literal).lte(0)) throw fail('must be greater than 0');
  const r = parseAmount(literal);
  if ('error' in r) throw fail(r.error);
  return r.value;
}

/** Items with each minimum_amount and per-dimension price as the exact digits the client wrote (≤ 9 decimals). */
export function exactItems(ctx: RequestContext, items: ItemInput[]): ItemRequest[] {
  const errors: FieldError[] = [];
  const out = exactItemsInto(numberLiteralsOf(ctx.rawBody), items, errors);
  if (errors.length) throw new ValidationError(errors);
  return out;
}

/** exactItems, its problems pushed on `errors` (a plan's items add their price books' problems to them). */
export function exactItemsInto(literal: LiteralAt, items: ItemInput[], errors: FieldError[]): ItemRequest[] {
  return items.map(({ minimum_amount, dimension, prices, default_price, ...item }, i): ItemRequest => {
    const dimensionPrices = exactDimensionPrices({ dimension, prices, default_price }, i, literal, errors);
    const request: ItemRequest = dimensionPrices ? { ...item, dimension_prices: dimensionPrices } : item;
    if (dimensionPrices && item.group_by?.length)
      errors.push({ field: `items[${i}].group_by`, message: 'is not available with dimension (it bills per value)' });
    if (dimensionPrices && minimum_amount !== undefined)
      errors.push({
        field: `items[${i}].minimum_amount`,
        message: 'is not available with dimension (a minimum applies to one usage line)',
      });
    if (minimum_amount === undefined) return request;
    const r = parseAmount(literal(['items', i, 'minimum_amount']) ?? '');
    if ('error' in r) errors.push({ field: `items[${i}].minimum_amount`, message: r.error });
    return { ...request, minimum_amount: 'value' in r ? r.value : '0' };
  });
}

/**
 * An item's per-dimension prices (issue 46): `dimension` and `prices` together (`default_price` only with them),
 * each value priced once, every model's amounts exact. Undefined when the item has none.
 */
function exactDimensionPrices(
  input: Pick<ItemInput, 'dimension' | 'prices' | 'default_price'>,
  i: number,
  literal: LiteralAt,
  errors: FieldError[],
): DimensionPrices | undefined {
  const at = `items[${i}]`;
  if (input.dimension === undefined) {
    if (input.prices !== undefined) errors.push({ field: `${at}.dimension`, message: 'is required with prices' });
    if (input.default_price !== undefined)
      errors.push({ field: `${at}.default_price`, message: 'is only for per-dimension prices (with dimension)' });
    return undefined;
  }
  if (input.prices === undefined) {
    errors.push({ field: `${at}.prices`, message: 'is required with dimension' });
    return undefined;
  }
  const seen = new Map<string, number>();
  const prices = input.prices.map((p, j) => {
    const earlier = seen.get(p.value);
    if (earlier !== undefined)
      errors.push({ field: `${at}.prices[${j}].value`, message: `repeats prices[${earlier}].value` });
    else seen.set(p.value, j);
    return { value: p.value, price: checkPriceModel(p.price, ['items', i, 'prices', j, 'price'], literal, errors) };
  });
  const default_price = input.default_price
    ? checkPriceModel(input.default_price, ['items', i, 'default_price'], literal, errors)
    : null;
  return { dimension: input.dimension, prices, default_price };
}
