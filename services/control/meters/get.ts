import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { okFromCache } from '../../../shared/http/cached-reply.js';
import { hasScope } from '../../../shared/auth/types.js';
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
    handler: (ctx) => {
      const id = ctx.params.meter_id!;
      const principal = ctx.principal!;
      // The answer depends on who asks: an operator sees any meter, any other token its own and the deployment's.
      const asker = hasScope(principal, 'admin') ? '' : principal.accountId;
      return okFromCache(deps.reads.of('meters'), `${asker}\n${id}`, async () =>
        toMeter(await getMeter(deps.pg, await accountActingOn(deps.pg, principal, 'meter', id), id)),
      );
    },
    doc: {
      summary: 'Get a meter',
      tags: ['meters'],
      responses: { '200': { description: 'The meter', schema: MeterSchema } },
    },
  };
}
