import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { AuditEventListSchema, ListAuditEventsQuery, type AuditEventListRequest } from '../../../shared/api/audit.js';
import { listAuditEvents } from '../../domain/audit/store.js';
import { parseListAuditEvents } from './input.js';
import { toAuditEvent } from './representation.js';

/** GET /v1/audit_events?resource&resource_type&actor&from&to&page&per_page (admin) — the deployment's audit log. */
export function listAuditEventsRoute(deps: ApiDeps): RouteDef<AuditEventListRequest> {
  return {
    method: 'GET',
    path: '/v1/audit_events',
    auth: 'admin',
    input: parseListAuditEvents,
    handler: async (_ctx, q) => {
      const filter = {
        resourceId: q.resource,
        resourceType: q.resourceType,
        actor: q.actor,
        from: q.from,
        to: q.to,
      };
      const { rows, total } = await listAuditEvents(deps.pg, filter, pageWindow(q));
      return reply.page(rows.map(toAuditEvent), q, total);
    },
    doc: {
      summary: 'The audit log: every change made through the API or the CLI, newest first (filters are exact)',
      tags: ['audit'],
      query: ListAuditEventsQuery,
      responses: { '200': { description: 'a page of audit events', schema: AuditEventListSchema } },
    },
  };
}
