import type { RouteDef } from '../../../shared/http/server.js';
import type { ApiDeps } from '../../api/modules.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { pageOf } from '../../../shared/http/pagination.js';
import { ListMetersQuery, MeterListSchema, toMeter } from './schemas.js';
import { listMeters } from './store.js';

const query = queryValidator<ListMetersQuery>(ListMetersQuery);

/** GET /v1/meters?page&per_page&status — the caller's meters, newest first. */
export function listMetersRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/meters',
    auth: 'read',
    handler: async (ctx) => {
      const q = query.parseQuery(ctx.query);
      const { rows, total } = await listMeters(deps.pg, ctx.principal!.accountId, q);
      return { status: 200, body: pageOf(rows.map(toMeter), q.page, q.per_page, total) };
    },
    doc: {
      summary: 'List meters (newest first)',
      tags: ['meters'],
      query: ListMetersQuery,
      responses: { '200': { description: 'A page of meters', schema: MeterListSchema } },
    },
  };
}
