import type { RouteDef } from '../../../shared/http/server.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../api/modules.js';
import { EVENT_RETENTION_DAYS } from './retention.js';
import { customerEvent } from './payload.js';
import { EventSchema } from './schemas.js';
import { getEvent } from './store.js';

/** GET /v1/events/:event_id — one event of the last 30 days; another account's → 404. */
export function getEventRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/events/:event_id',
    auth: 'read',
    handler: async (ctx) => {
      const event = await getEvent(deps.pg, ctx.principal!.accountId, ctx.params.event_id!, EVENT_RETENTION_DAYS);
      if (!event) throw new NotFoundError('No such event.');
      return { status: 200, body: customerEvent(event) };
    },
    doc: {
      summary: 'Get one event (kept 30 days) in the webhook payload shape',
      tags: ['events'],
      responses: { '200': { description: 'the event', schema: EventSchema } },
    },
  };
}
