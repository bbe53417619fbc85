import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { parseUpdateWebhook } from './parse.js';
import { UpdateWebhookBody, WebhookSchema } from './schemas.js';
import { sealWebhookSecret, webhookSecretKey } from './secret.js';
import { updateWebhook } from './store.js';
import { syncUsageSubscriberQuietly } from './usage-subscribers.js';

export function updateWebhookRoute(deps: ApiDeps): RouteDef {
  const key = webhookSecretKey(deps.config.SECRET_KEY);
  return {
    method: 'PATCH',
    path: '/v1/webhooks/:webhook_id',
    auth: 'write',
    handler: async (ctx) => {
      const input = parseUpdateWebhook(ctx.body, deps.config.WEBHOOKS_ALLOW_PRIVATE_URLS);
      const webhook = await updateWebhook(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!, {
        url: input.url,
        events: input.events,
        status: input.status,
        secretSealed: input.secret === undefined ? undefined : sealWebhookSecret(key, input.secret),
      });
      if (!webhook) throw new NotFoundError('No such webhook.');
      await syncUsageSubscriberQuietly(deps, ctx.principal!.accountId);
      return { status: 200, body: webhook };
    },
    doc: {
      summary: 'Change any of url, events, status (enable/disable) and secret (rotation; write-only)',
      tags: ['webhooks'],
      requestBody: UpdateWebhookBody,
      responses: { '200': { description: 'the updated webhook', schema: WebhookSchema } },
    },
  };
}
