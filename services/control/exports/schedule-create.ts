import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateExportScheduleBody, ExportScheduleSchema } from '../../../shared/api/exports.js';
import { insertSchedule } from '../../domain/exports/store.js';
import type { NewExportSchedule } from '../../domain/exports/types.js';
import { parseNewSchedule } from './input.js';
import { toExportSchedule } from './representation.js';

/** POST /v1/export_schedules — one export per whole hour or UTC day from `starts_at` on. */
export function createScheduleRoute(deps: ApiDeps): RouteDef<NewExportSchedule> {
  return {
    method: 'POST',
    path: '/v1/export_schedules',
    auth: 'admin',
    input: parseNewSchedule(deps.config),
    handler: async (ctx, s) => {
      const row = await insertSchedule(deps.pg, ctx.principal!.accountId, s);
      return reply.created(toExportSchedule(row), `/v1/export_schedules/${row.id}`);
    },
    doc: {
      summary: 'Schedule an export every hour or every day',
      tags: ['exports'],
      requestBody: CreateExportScheduleBody,
      responses: { '201': { description: 'The schedule (Location names it)', schema: ExportScheduleSchema } },
    },
  };
}
