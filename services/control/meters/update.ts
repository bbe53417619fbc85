import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { hasScope } from '../../../shared/auth/types.js';
import { MeterSchema, UpdateMeterBody } from '../../../shared/api/meters.js';
import { toMeter } from './representation.js';
import type { MeterChange } from '../../domain/meters/types.js';
import { parseMeterChange } from './input.js';
import { updateMeter } from '../../domain/meters/store.js';
import type { MeterRegistryWriter } from '../../domain/meters/registry.js';

/**
 * PATCH /v1/meters/:meter_id — name, unit, status (inactive ↔ active). type and aggregation are fixed
 * once created: usage already stored was aggregated under them (422 when a request tries to change them).
 */
export function updateMeterRoute(deps: ApiDeps, registry: () => MeterRegistryWriter): RouteDef<MeterChange> {
  return {
    method: 'PATCH',
    path: '/v1/meters/:meter_id',
    auth: 'write',
    input: parseMeterChange,
    handler: async (ctx, change) => {
      const asOperator = hasScope(ctx.principal!, 'admin');
      const meterId = ctx.params.meter_id!;
      return reply.ok(
        toMeter(await updateMeter(deps.pg, registry(), ctx.principal!.accountId, meterId, change, asOperator)),
      );
    },
    doc: {
      summary: 'Update a meter’s name, unit or status (a deployment meter: admin only)',
      tags: ['meters'],
      requestBody: UpdateMeterBody,
      responses: { '200': { description: 'The updated meter', schema: MeterSchema } },
    },
  };
}
