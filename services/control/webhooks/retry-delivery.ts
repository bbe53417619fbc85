import type { RouteDef } from '../../../shared/http/server.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../api/modules.js';
import { DeliverySchema } from './schemas.js';
import { scheduleManualAttempt, WebhookDisabledError } from './actions-store.js';

/** POST /v1/webhooks/:webhook_id/deliveries/:delivery_id/retry — send that event to that webhook again now. */
export function retryDeliveryRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'POST',
    path: '/v1/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    auth: 'write',
    handler: async (ctx) => {
      try {
        const attempt = await scheduleManualAttempt(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!, ctx.params.delivery_id!);
        if (!attempt) throw new NotFoundError('No such delivery of this webhook.');
        return { status: 202, body: attempt };
      } catch (err) {
        if (err instanceof WebhookDisabledError) throw new ConflictError('The webhook is disabled; enable it first.', 'webhook_disabled');
        throw err;
      }
    },
    doc: {
      summary: 'Send the event of this delivery to the webhook again, now (a new attempt with the same event id); the dispatcher sends it within about a second',
      tags: ['webhooks'],
      responses: { '202': { description: 'the attempt that will be sent', schema: DeliverySchema } },
    },
  };
}
