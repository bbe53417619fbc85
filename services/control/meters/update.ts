import type { RouteDef } from '../../../shared/http/route.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { MeterSchema, UpdateMeterBody, toMeter } from './schemas.js';
import { updateMeter } from './store.js';
import type { MeterRegistryWriter } from './registry.js';

const body = bodyValidator<UpdateMeterBody>(UpdateMeterBody);

/**
 * PATCH /v1/meters/:meter_id — name, unit, status (inactive ↔ active). type and aggregation are fixed
 * once created: usage already stored was aggregated under them (422 when a request tries to change them).
 */
export function updateMeterRoute(deps: ApiDeps, registry: () => MeterRegistryWriter): RouteDef {
  return {
    method: 'PATCH',
    path: '/v1/meters/:meter_id',
    auth: 'write',
    handler: async (ctx) => {
      const input = body.parse(ctx.body);
      if (Object.keys(input).length === 0) throw new ValidationError([{ field: '', message: 'must contain at least one of name, unit, status' }]);
      const errors: FieldError[] = [];
      const name = input.name?.trim();
      const unit = input.unit?.trim();
      if (name === '') errors.push({ field: 'name', message: 'must not be blank' });
      if (unit === '') errors.push({ field: 'unit', message: 'must not be blank' });
      if (errors.length) throw new ValidationError(errors);
      const row = await updateMeter(deps.pg, registry(), ctx.principal!.accountId, ctx.params.meter_id!, { name, unit, status: input.status }, (cur) => {
        const fixed: FieldError[] = [];
        if (input.type !== undefined && input.type !== cur.type) fixed.push({ field: 'type', message: 'cannot be changed after the meter is created' });
        if (input.aggregation !== undefined && input.aggregation !== cur.aggregation) {
          fixed.push({ field: 'aggregation', message: 'cannot be changed after the meter is created' });
        }
        if (fixed.length) throw new ValidationError(fixed);
      });
      return { status: 200, body: toMeter(row) };
    },
    doc: {
      summary: 'Update a meter’s name, unit or status',
      tags: ['meters'],
      requestBody: UpdateMeterBody,
      responses: { '200': { description: 'The updated meter', schema: MeterSchema } },
    },
  };
}
