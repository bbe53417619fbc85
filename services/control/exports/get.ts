import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ExportSchema } from '../../../shared/api/exports.js';
import { getExport } from '../../domain/exports/store.js';
import { toExport } from './representation.js';

/** GET /v1/exports/{id} — how far the export got, and where its object is. */
export function getExportRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/exports/:export_id',
    auth: 'admin',
    handler: async (ctx) =>
      reply.ok(toExport(await getExport(deps.pg, ctx.principal!.accountId, ctx.params.export_id!))),
    doc: {
      summary: 'Get an export',
      tags: ['exports'],
      responses: { '200': { description: 'The export', schema: ExportSchema } },
    },
  };
}
