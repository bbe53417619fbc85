import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { deleteSchedule } from '../../domain/exports/store.js';

/** DELETE /v1/export_schedules/{id} — no windows are added any more; its exports so far stay. */
export function deleteScheduleRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'DELETE',
    path: '/v1/export_schedules/:schedule_id',
    auth: 'admin',
    handler: async (ctx) => {
      await deleteSchedule(deps.pg, ctx.principal!.accountId, ctx.params.schedule_id!);
      return reply.noContent();
    },
    doc: { summary: 'Delete an export schedule', tags: ['exports'], responses: { '204': { description: 'Deleted' } } },
  };
}
