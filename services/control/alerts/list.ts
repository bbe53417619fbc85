import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { AlertListSchema, ListAlertsQuery } from '../../../shared/api/alerts.js';
import { listAlerts } from '../../domain/alerts/store.js';
import { alertViewer } from '../../domain/alerts/create.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { parseListAlerts } from './input.js';
import { toAlert } from './representation.js';

/** GET /v1/alerts — a customer's own alerts; an admin's: every alert of the deployment, or one customer's. */
export function listAlertsRoute(deps: ApiDeps): RouteDef<ListAlertsQuery> {
  return {
    method: 'GET',
    path: '/v1/alerts',
    auth: 'read',
    input: parseListAlerts,
    handler: async (ctx, q) => {
      const principal = ctx.principal!;
      const customer =
        q.customer_id === undefined ? undefined : await accountActedFor(deps.pg, principal, q.customer_id);
      const { rows, total } = await listAlerts(deps.pg, alertViewer(principal, customer), pageWindow(q));
      return reply.page(rows.map(toAlert), q, total);
    },
    doc: {
      summary: 'List alerts (newest first)',
      tags: ['alerts'],
      query: ListAlertsQuery,
      responses: { '200': { description: 'A page of alerts', schema: AlertListSchema } },
    },
  };
}
