import type { RouteDef } from '../../../shared/http/route.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator } from '../../../shared/http/validation.js';
import { AGGREGATIONS } from '../../../shared/meters/record.js';
import { CreateMeterBody, MeterSchema, toMeter } from './schemas.js';
import { createMeter } from './store.js';
import type { MeterRegistryWriter } from './registry.js';

const body = bodyValidator<CreateMeterBody>(CreateMeterBody);

/** POST /v1/meters — 201 + Location once Postgres and the KV registry both hold the meter. */
export function createMeterRoute(deps: ApiDeps, registry: () => MeterRegistryWriter): RouteDef {
  return {
    method: 'POST',
    path: '/v1/meters',
    auth: 'write',
    handler: async (ctx) => {
      const input = body.parse(ctx.body);
      const type = input.type ?? 'counter';
      const errors: FieldError[] = [];
      const name = input.name.trim();
      const unit = input.unit.trim();
      if (!name) errors.push({ field: 'name', message: 'must not be blank' });
      if (!unit) errors.push({ field: 'unit', message: 'must not be blank' });
      if (!AGGREGATIONS[type].includes(input.aggregation)) {
        errors.push({ field: 'aggregation', message: `must be one of ${AGGREGATIONS[type].join(', ')} for a ${type} meter` });
      }
      if (errors.length) throw new ValidationError(errors);
      const row = await createMeter(deps.pg, registry(), ctx.principal!.accountId, { name, unit, type, aggregation: input.aggregation }, deps.protection.limits(ctx.principal!.accountId).max_meters);
      return { status: 201, body: toMeter(row), headers: { Location: `/v1/meters/${row.id}` } };
    },
    doc: {
      summary: 'Create a meter',
      tags: ['meters'],
      requestBody: CreateMeterBody,
      responses: { '201': { description: 'The created meter, usable by every ingress (Location names it)', schema: MeterSchema } },
    },
  };
}
