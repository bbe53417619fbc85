import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { hasControlCharacter } from '../../../shared/strings.js';
import {
  CreatePlanBody,
  CreatePlanVersionBody,
  GetPlanQuery,
  ListPlansQuery,
  MigratePlanBody,
  MigratePlanQuery,
} from '../../../shared/api/plans.js';
import type { NewPlan, PlanVersionChange } from '../../domain/plans/types.js';
import { exactPlanItems } from './items-input.js';

/**
 * Plans' one validation place for the request's shape. Whether the items make sense (products exist, meters are
 * the deployment's, one currency) depends on the database: the store checks that as a subscription's items.
 */
const createBody = bodyValidator<CreatePlanBody>(CreatePlanBody);
const versionBody = bodyValidator<CreatePlanVersionBody>(CreatePlanVersionBody);
const migrateBody = bodyValidator<MigratePlanBody>(MigratePlanBody);
const listQuery = queryValidator<ListPlansQuery>(ListPlansQuery);
const getQuery = queryValidator<GetPlanQuery>(GetPlanQuery);
const migrateQuery = queryValidator<MigratePlanQuery>(MigratePlanQuery);

function printableName(v: string, errors: FieldError[]): string {
  const t = v.trim();
  if (!t || hasControlCharacter(t)) errors.push({ field: 'name', message: 'must be printable and not blank' });
  return t;
}

export function parseNewPlan(ctx: RequestContext): NewPlan {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const name = printableName(input.name, errors);
  if (errors.length) throw new ValidationError(errors);
  return {
    name,
    currency: input.currency.toUpperCase(),
    interval: input.interval,
    interval_count: input.interval_count ?? 1,
    items: exactPlanItems(ctx, input.items),
    trial_days: input.trial_days ?? 0,
  };
}

export function parsePlanVersionChange(ctx: RequestContext): PlanVersionChange {
  const input = versionBody.parse(ctx.body);
  if (Object.keys(input).length === 0)
    throw new ValidationError([
      { field: '', message: 'must change at least one of name, interval, interval_count, items, trial_days' },
    ]);
  const errors: FieldError[] = [];
  const name = input.name === undefined ? undefined : printableName(input.name, errors);
  if (errors.length) throw new ValidationError(errors);
  return { ...input, name, items: input.items && exactPlanItems(ctx, input.items) };
}

export const parseListPlans = (ctx: RequestContext): ListPlansQuery => listQuery.parseQuery(ctx.query);
export const parseGetPlan = (ctx: RequestContext): GetPlanQuery => getQuery.parseQuery(ctx.query);

export interface PlanMigrationRequest extends MigratePlanBody {
  page: number;
  per_page: number;
}

export function parsePlanMigration(ctx: RequestContext): PlanMigrationRequest {
  const body = migrateBody.parse(ctx.body);
  if (body.from_version === body.to_version)
    throw new ValidationError([{ field: 'to_version', message: 'must differ from from_version' }]);
  return { ...body, ...migrateQuery.parseQuery(ctx.query) };
}
