import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { WebhookSchema } from './schemas.js';
import { getWebhook } from './store.js';

export function getWebhookRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/webhooks/:webhook_id',
    auth: 'read',
    handler: async (ctx) => {
      const webhook = await getWebhook(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!);
      if (!webhook) throw new NotFoundError('No such webhook.');
      return { status: 200, body: webhook };
    },
    doc: {
      summary: 'Get one webhook (the secret is never returned)',
      tags: ['webhooks'],
      responses: { '200': { description: 'the webhook', schema: WebhookSchema } },
    },
  };
}
