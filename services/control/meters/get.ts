import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { MeterSchema } from '../../../shared/api/meters.js';
import { toMeter } from './representation.js';
import { getMeter } from '../../domain/meters/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/** GET /v1/meters/:meter_id — the account's meter or a deployment meter; 404 for another account's. */
export function getMeterRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/meters/:meter_id',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.meter_id!;
      return reply.ok(
        toMeter(await getMeter(deps.pg, await accountActingOn(deps.pg, ctx.principal!, 'meter', id), id)),
      );
    },
    doc: {
      summary: 'Get a meter',
      tags: ['meters'],
      responses: { '200': { description: 'The meter', schema: MeterSchema } },
    },
  };
}
