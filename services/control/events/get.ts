import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { customerEvent } from '../../domain/events/payload.js';
import { EventSchema } from '../../../shared/api/events.js';
import { getEvent } from '../../domain/events/store.js';

/** GET /v1/events/:event_id — one event of the last 30 days; another account's → 404. */
export function getEventRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/events/:event_id',
    auth: 'read',
    handler: async (ctx) =>
      reply.ok(customerEvent(await getEvent(deps.pg, ctx.principal!.accountId, ctx.params.event_id!))),
    doc: {
      summary: 'Get one event (kept 30 days) in the webhook payload shape',
      tags: ['events'],
      responses: { '200': { description: 'the event', schema: EventSchema } },
    },
  };
}
