import type { RouteDef } from '../../../shared/http/server.js';
import type { ApiDeps } from '../../api/modules.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { limitOffset, listOf, pageOf } from '../../../shared/http/pagination.js';
import { EVENT_RETENTION_DAYS } from './retention.js';
import { customerEvent } from './payload.js';
import { EventSchema, ListEventsQuery } from './schemas.js';
import { listEvents } from './store.js';

const query = queryValidator<ListEventsQuery>(ListEventsQuery);

/** GET /v1/events?type&page&per_page — the account's events of the last 30 days, newest first. */
export function listEventsRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/events',
    auth: 'read',
    handler: async (ctx) => {
      const q = query.parseQuery(ctx.query);
      const [limit, offset] = limitOffset(q.page, q.per_page);
      const { items, total } = await listEvents(deps.pg, ctx.principal!.accountId, { type: q.type, limit, offset, retentionDays: EVENT_RETENTION_DAYS });
      return { status: 200, body: pageOf(items.map(customerEvent), q.page, q.per_page, total) };
    },
    doc: {
      summary: "The account's events of the last 30 days, newest first, in the webhook payload's shape (to reconcile after downtime)",
      tags: ['events'],
      query: ListEventsQuery,
      responses: { '200': { description: 'a page of events', schema: listOf(EventSchema) } },
    },
  };
}
