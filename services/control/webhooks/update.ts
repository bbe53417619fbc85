import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { parseUpdateWebhook, refuseNonPublicHost } from './input.js';
import { UpdateWebhookBody, WebhookSchema, type UpdateWebhookInput } from '../../../shared/api/webhooks.js';
import { toWebhook } from './representation.js';
import { sealWebhookSecret, webhookSecretKey } from '../../domain/webhooks/secret.js';
import { updateWebhook } from '../../domain/webhooks/store.js';
import { syncUsageSubscriberQuietly } from '../../domain/webhooks/usage-subscribers.js';

/** PATCH /v1/webhooks/:webhook_id — url, events, status, secret (rotation). */
export function updateWebhookRoute(deps: ApiDeps): RouteDef<UpdateWebhookInput> {
  const key = webhookSecretKey(deps.config.SECRET_KEY);
  return {
    method: 'PATCH',
    path: '/v1/webhooks/:webhook_id',
    auth: 'write',
    input: (ctx) => parseUpdateWebhook(ctx.body, deps.config.WEBHOOKS_ALLOW_PRIVATE_URLS),
    handler: async (ctx, input) => {
      if (input.url !== undefined) await refuseNonPublicHost(input.url, deps.config.WEBHOOKS_ALLOW_PRIVATE_URLS);
      const row = await updateWebhook(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!, {
        url: input.url,
        events: input.events,
        status: input.status,
        secretSealed: input.secret === undefined ? undefined : sealWebhookSecret(key, input.secret),
      });
      await syncUsageSubscriberQuietly(deps, ctx.principal!.accountId);
      return reply.ok(toWebhook(row));
    },
    doc: {
      summary: 'Change any of url, events, status (enable/disable) and secret (rotation; write-only)',
      tags: ['webhooks'],
      requestBody: UpdateWebhookBody,
      responses: { '200': { description: 'the updated webhook', schema: WebhookSchema } },
    },
  };
}
