import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { deleteWebhook } from '../../domain/webhooks/store.js';
import { syncUsageSubscriberQuietly } from '../../domain/webhooks/usage-subscribers.js';

/** DELETE /v1/webhooks/:webhook_id — the webhook and its delivery history. */
export function deleteWebhookRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'DELETE',
    path: '/v1/webhooks/:webhook_id',
    auth: 'write',
    handler: async (ctx) => {
      await deleteWebhook(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!);
      await syncUsageSubscriberQuietly(deps, ctx.principal!.accountId);
      return reply.noContent();
    },
    doc: {
      summary: 'Remove a webhook and its delivery history; nothing more is delivered to it',
      tags: ['webhooks'],
      responses: { '204': { description: 'removed' } },
    },
  };
}
