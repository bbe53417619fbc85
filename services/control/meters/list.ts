import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ListMetersQuery, MeterListSchema } from '../../../shared/api/meters.js';
import { toMeter } from './representation.js';
import { parseListMeters } from './input.js';
import { listMeters } from '../../domain/meters/store.js';

/** GET /v1/meters?page&per_page&status — the caller's meters, newest first. */
export function listMetersRoute(deps: ApiDeps): RouteDef<ListMetersQuery> {
  return {
    method: 'GET',
    path: '/v1/meters',
    auth: 'read',
    input: parseListMeters,
    handler: async (ctx, q) => {
      const { rows, total } = await listMeters(deps.pg, ctx.principal!.accountId, q, pageWindow(q));
      return reply.page(rows.map(toMeter), q, total);
    },
    doc: {
      summary: 'List meters (newest first)',
      tags: ['meters'],
      query: ListMetersQuery,
      responses: { '200': { description: 'A page of meters', schema: MeterListSchema } },
    },
  };
}
