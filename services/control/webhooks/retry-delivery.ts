import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { DeliverySchema } from '../../../shared/api/webhooks.js';
import { toDelivery } from './representation.js';
import { scheduleManualAttempt } from '../../domain/webhooks/actions-store.js';

/** POST /v1/webhooks/:webhook_id/deliveries/:delivery_id/retry — send that event to that webhook again now. */
export function retryDeliveryRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    auth: 'write',
    body: 'none',
    handler: async (ctx) =>
      reply.accepted(
        toDelivery(
          await scheduleManualAttempt(
            deps.pg,
            ctx.principal!.accountId,
            ctx.params.webhook_id!,
            ctx.params.delivery_id!,
          ),
        ),
      ),
    doc: {
      summary:
        'Send the event of this delivery to the webhook again, now (a new attempt with the same event id); the dispatcher sends it within about a second. 409 webhook_disabled for a disabled webhook',
      tags: ['webhooks'],
      responses: { '202': { description: 'the attempt that will be sent', schema: DeliverySchema } },
    },
  };
}
