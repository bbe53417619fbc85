import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { customerEvent } from '../../domain/events/payload.js';
import { parseListEvents } from './input.js';
import { EventListSchema, ListEventsQuery, type EventListRequest } from '../../../shared/api/events.js';
import { listEvents } from '../../domain/events/store.js';

/** GET /v1/events?type&page&per_page — the account's events of the last 30 days, newest first. */
export function listEventsRoute(deps: ApiDeps): RouteDef<EventListRequest> {
  return {
    method: 'GET',
    path: '/v1/events',
    auth: 'read',
    input: parseListEvents,
    handler: async (ctx, q) => {
      const { rows, total } = await listEvents(deps.pg, ctx.principal!.accountId, q.type, pageWindow(q));
      return reply.page(rows.map(customerEvent), q, total);
    },
    doc: {
      summary:
        "The account's events of the last 30 days, newest first, in the webhook payload's shape (to reconcile after downtime)",
      tags: ['events'],
      query: ListEventsQuery,
      responses: { '200': { description: 'a page of events', schema: EventListSchema } },
    },
  };
}
