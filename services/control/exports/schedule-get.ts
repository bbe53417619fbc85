import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ExportScheduleSchema } from '../../../shared/api/exports.js';
import { getSchedule } from '../../domain/exports/store.js';
import { toExportSchedule } from './representation.js';

/** GET /v1/export_schedules/{id}. */
export function getScheduleRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/export_schedules/:schedule_id',
    auth: 'admin',
    handler: async (ctx) =>
      reply.ok(toExportSchedule(await getSchedule(deps.pg, ctx.principal!.accountId, ctx.params.schedule_id!))),
    doc: {
      summary: 'Get an export schedule',
      tags: ['exports'],
      responses: { '200': { description: 'The schedule', schema: ExportScheduleSchema } },
    },
  };
}
