import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt } from '../../../shared/money/json.js';
import {
  CheckEntitlementQuery,
  CreateEntitlementBody,
  CreateGrantBody,
  ListEntitlementsQuery,
  UpdateEntitlementBody,
} from '../../../shared/api/entitlements.js';
import type { EntitlementChange, NewGrant } from '../../domain/entitlements/types.js';

/** Entitlements' one validation place: the schema, then exact decimals and the fields each type must (not) have. */
const createBody = bodyValidator<CreateEntitlementBody>(CreateEntitlementBody);
const updateBody = bodyValidator<UpdateEntitlementBody>(UpdateEntitlementBody);
const grantBody = bodyValidator<CreateGrantBody>(CreateGrantBody);
const listQuery = queryValidator<ListEntitlementsQuery>(ListEntitlementsQuery);
const checkQuery = queryValidator<CheckEntitlementQuery>(CheckEntitlementQuery);

/** An exact decimal the client wrote (not the float JSON.parse made of it). */
function exactDecimal(ctx: RequestContext, field: string, errors: FieldError[]): string | undefined {
  const parsed = parseAmount(numberLiteralAt(ctx.rawBody, field) ?? '');
  if ('error' in parsed) {
    errors.push({ field, message: parsed.error });
    return undefined;
  }
  return parsed.value;
}

/** A create, the customer still named by its `cus_` id (the route resolves it). */
export type EntitlementInput =
  | { customerId: string; feature: string; type: 'boolean' }
  | {
      customerId: string;
      feature: string;
      type: 'metered';
      meterId: string;
      limit: string;
      period: 'billing_period' | 'month' | 'day';
      overage: 'block' | 'allow';
      dimension?: { key: string; value: string };
    };

export function parseNewEntitlement(ctx: RequestContext): EntitlementInput {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const base = { customerId: input.customer_id, feature: input.feature };
  if (input.type === 'boolean') {
    for (const field of ['meter_id', 'limit', 'period', 'overage', 'dimension'] as const)
      if (input[field] !== undefined) errors.push({ field, message: 'a boolean entitlement has none' });
    if (errors.length) throw new ValidationError(errors);
    return { ...base, type: 'boolean' };
  }
  if (input.meter_id === undefined)
    errors.push({ field: 'meter_id', message: 'is required for a metered entitlement' });
  let limit: string | undefined;
  if (input.limit === undefined) errors.push({ field: 'limit', message: 'is required for a metered entitlement' });
  else limit = exactDecimal(ctx, 'limit', errors);
  if (errors.length) throw new ValidationError(errors);
  return {
    ...base,
    type: 'metered',
    meterId: input.meter_id!,
    limit: limit!,
    period: input.period ?? 'billing_period',
    overage: input.overage ?? 'block',
    ...(input.dimension ? { dimension: input.dimension } : {}),
  };
}

export function parseEntitlementChange(ctx: RequestContext): EntitlementChange {
  const input = updateBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const limit = input.limit === undefined ? undefined : exactDecimal(ctx, 'limit', errors);
  if (errors.length) throw new ValidationError(errors);
  return { limit, period: input.period, overage: input.overage };
}

export function parseNewGrant(ctx: RequestContext): NewGrant {
  const input = grantBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const amount = exactDecimal(ctx, 'amount', errors);
  if (errors.length) throw new ValidationError(errors);
  return { amount: amount!, expiresAt: input.expires_at === undefined ? null : new Date(input.expires_at) };
}

export const parseListEntitlements = (ctx: RequestContext): ListEntitlementsQuery => listQuery.parseQuery(ctx.query);
export const parseCheck = (ctx: RequestContext): CheckEntitlementQuery => checkQuery.parseQuery(ctx.query);
