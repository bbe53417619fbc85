import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { deleteAlert } from '../../domain/alerts/store.js';
import { alertViewer } from '../../domain/alerts/create.js';

/** DELETE /v1/alerts/{id} — it fires no more; another customer's alert is 404. */
export function deleteAlertRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'DELETE',
    path: '/v1/alerts/:alert_id',
    auth: 'write',
    handler: async (ctx) => {
      await deleteAlert(deps.pg, alertViewer(ctx.principal!), ctx.params.alert_id!);
      return reply.noContent();
    },
    doc: { summary: 'Delete an alert', tags: ['alerts'], responses: { '204': { description: 'Deleted' } } },
  };
}
