import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { WebhookSchema } from '../../../shared/api/webhooks.js';
import { toWebhook } from './representation.js';
import { getWebhook } from '../../domain/webhooks/store.js';

/** GET /v1/webhooks/:webhook_id — never the secret. */
export function getWebhookRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/webhooks/:webhook_id',
    auth: 'read',
    handler: async (ctx) =>
      reply.ok(toWebhook(await getWebhook(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!))),
    doc: {
      summary: 'Get one webhook (the secret is never returned)',
      tags: ['webhooks'],
      responses: { '200': { description: 'the webhook', schema: WebhookSchema } },
    },
  };
}
