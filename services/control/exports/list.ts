import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ExportListSchema, ListExportsQuery } from '../../../shared/api/exports.js';
import { listExports } from '../../domain/exports/store.js';
import { parseListExports } from './input.js';
import { toExport } from './representation.js';

/** GET /v1/exports — the deployment's exports, newest first (optionally one schedule's). */
export function listExportsRoute(deps: ApiDeps): RouteDef<ListExportsQuery> {
  return {
    method: 'GET',
    path: '/v1/exports',
    auth: 'admin',
    input: parseListExports,
    handler: async (ctx, q) => {
      const { rows, total } = await listExports(deps.pg, ctx.principal!.accountId, pageWindow(q), q.schedule_id);
      return reply.page(rows.map(toExport), q, total);
    },
    doc: {
      summary: 'List exports (newest first)',
      tags: ['exports'],
      query: ListExportsQuery,
      responses: { '200': { description: 'A page of exports', schema: ExportListSchema } },
    },
  };
}
