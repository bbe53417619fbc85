import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { AGGREGATIONS } from '../../../shared/meters/record.js';
import { CUSTOMER_KEY } from '../../../shared/customers/attribution.js';
import { CreateMeterBody, ListMetersQuery, UpdateMeterBody } from '../../../shared/api/meters.js';
import type { MeterChange, NewMeter } from '../../domain/meters/types.js';

/** Meters' one validation place: schema first, then blank names/units and the aggregations a type allows. */
const createBody = bodyValidator<CreateMeterBody>(CreateMeterBody);
const updateBody = bodyValidator<UpdateMeterBody>(UpdateMeterBody);
const listQuery = queryValidator<ListMetersQuery>(ListMetersQuery);

export const parseListMeters = (ctx: RequestContext): ListMetersQuery => listQuery.parseQuery(ctx.query);

export function parseNewMeter(ctx: RequestContext): NewMeter {
  const input = createBody.parse(ctx.body);
  const type = input.type ?? 'counter';
  const errors: FieldError[] = [];
  const name = input.name.trim();
  const unit = input.unit.trim();
  if (!name) errors.push({ field: 'name', message: 'must not be blank' });
  if (!unit) errors.push({ field: 'unit', message: 'must not be blank' });
  if (!AGGREGATIONS[type].includes(input.aggregation)) {
    errors.push({
      field: 'aggregation',
      message: `must be one of ${AGGREGATIONS[type].join(', ')} for a ${type} meter`,
    });
  }
  const dimensions = input.dimensions ?? [];
  const uniqueBy = input.unique_by ?? null;
  if (input.aggregation === 'unique_count' && uniqueBy === null)
    errors.push({ field: 'unique_by', message: 'is required for aggregation unique_count' });
  if (input.aggregation !== 'unique_count' && uniqueBy !== null)
    errors.push({ field: 'unique_by', message: 'is only for aggregation unique_count' });
  if (uniqueBy !== null && dimensions.length > 0 && !dimensions.includes(uniqueBy))
    errors.push({ field: 'unique_by', message: 'must be one of the declared dimensions' });
  const scope = input.scope ?? 'account';
  if (scope === 'deployment') {
    // Per-hour distinct sets are registered per (account, meter) before a meter is usable (usage_unique_meters):
    // a deployment meter's accounts are not known in advance.
    if (input.aggregation === 'unique_count')
      errors.push({ field: 'aggregation', message: 'unique_count is not available on deployment meters' });
    // On a deployment meter `customer` names the customer in reads (group_by=customer, filter[customer]).
    if (dimensions.includes(CUSTOMER_KEY))
      errors.push({ field: 'dimensions', message: `${CUSTOMER_KEY} names the customer on a deployment meter` });
  }
  if (errors.length) throw new ValidationError(errors);
  return { name, unit, type, aggregation: input.aggregation, dimensions, uniqueBy, scope, key: input.key ?? null };
}

/** `type` and `aggregation` pass through: the store rejects them when they differ from the meter's (422). */
export function parseMeterChange(ctx: RequestContext): MeterChange {
  const input = updateBody.parse(ctx.body);
  if (Object.keys(input).length === 0)
    throw new ValidationError([
      { field: '', message: 'must contain at least one of name, unit, status, dimensions, key' },
    ]);
  const errors: FieldError[] = [];
  const name = input.name?.trim();
  const unit = input.unit?.trim();
  if (name === '') errors.push({ field: 'name', message: 'must not be blank' });
  if (unit === '') errors.push({ field: 'unit', message: 'must not be blank' });
  if (errors.length) throw new ValidationError(errors);
  return {
    name,
    unit,
    status: input.status,
    type: input.type,
    aggregation: input.aggregation,
    dimensions: input.dimensions,
    key: input.key,
  };
}
