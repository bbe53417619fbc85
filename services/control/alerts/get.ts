import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { AlertSchema } from '../../../shared/api/alerts.js';
import { getAlert } from '../../domain/alerts/store.js';
import { alertViewer } from '../../domain/alerts/create.js';
import { toAlert } from './representation.js';

/** GET /v1/alerts/{id} — another customer's alert (or, for a customer, a deployment-wide one) is 404. */
export function getAlertRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/alerts/:alert_id',
    auth: 'read',
    handler: async (ctx) =>
      reply.ok(toAlert(await getAlert(deps.pg, alertViewer(ctx.principal!), ctx.params.alert_id!))),
    doc: {
      summary: 'Get an alert',
      tags: ['alerts'],
      responses: { '200': { description: 'The alert', schema: AlertSchema } },
    },
  };
}
