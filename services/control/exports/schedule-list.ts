import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { ExportScheduleListSchema, ListExportSchedulesQuery } from '../../../shared/api/exports.js';
import { listSchedules } from '../../domain/exports/store.js';
import { parseListSchedules } from './input.js';
import { toExportSchedule } from './representation.js';

/** GET /v1/export_schedules — newest first. */
export function listSchedulesRoute(deps: ApiDeps): RouteDef<ListExportSchedulesQuery> {
  return {
    method: 'GET',
    path: '/v1/export_schedules',
    auth: 'admin',
    input: parseListSchedules,
    handler: async (ctx, q) => {
      const { rows, total } = await listSchedules(deps.pg, ctx.principal!.accountId, pageWindow(q));
      return reply.page(rows.map(toExportSchedule), q, total);
    },
    doc: {
      summary: 'List export schedules (newest first)',
      tags: ['exports'],
      query: ListExportSchedulesQuery,
      responses: { '200': { description: 'A page of schedules', schema: ExportScheduleListSchema } },
    },
  };
}
