import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { parseCreateWebhook, refuseNonPublicHost } from './input.js';
import { CreateWebhookBody, CreatedWebhookSchema, type CreateWebhookInput } from '../../../shared/api/webhooks.js';
import { toWebhook } from './representation.js';
import { generateWebhookSecret, sealWebhookSecret, webhookSecretKey } from '../../domain/webhooks/secret.js';
import { insertWebhook } from '../../domain/webhooks/store.js';
import { syncUsageSubscriberQuietly } from '../../domain/webhooks/usage-subscribers.js';
import { requireScope } from '../../../shared/auth/types.js';

/** POST /v1/webhooks — without `secret` the server generates one and shows it in this response only. */
export function createWebhookRoute(deps: ApiDeps): RouteDef<CreateWebhookInput> {
  const key = webhookSecretKey(deps.config.SECRET_KEY);
  return {
    method: 'POST',
    path: '/v1/webhooks',
    auth: 'write',
    input: (ctx) => parseCreateWebhook(ctx.body, deps.config.WEBHOOKS_ALLOW_PRIVATE_URLS),
    handler: async (ctx, input) => {
      // A deployment webhook receives every customer's events: only an operator makes one.
      if (input.scope === 'deployment') requireScope(ctx.principal!, 'admin');
      if (input.url !== undefined) await refuseNonPublicHost(input.url, deps.config.WEBHOOKS_ALLOW_PRIVATE_URLS);
      const generated = input.secret === undefined ? generateWebhookSecret() : undefined;
      const secret = input.secret ?? generated!;
      const webhook = toWebhook(
        await insertWebhook(
          deps.pg,
          ctx.principal!.accountId,
          { url: input.url, events: input.events, secretSealed: sealWebhookSecret(key, secret), scope: input.scope },
          deps.protection.limits(ctx.principal!.accountId).max_webhooks,
        ),
      );
      await syncUsageSubscriberQuietly(deps, ctx.principal!.accountId);
      // A caller-supplied secret is write-only; a generated one is shown this once.
      return reply.created(generated ? { ...webhook, secret: generated } : webhook, `/v1/webhooks/${webhook.id}`);
    },
    doc: {
      summary:
        'Register a webhook (scope deployment: admin only, every customer’s events). Without `secret` the server generates one and returns it once, in this response.',
      tags: ['webhooks'],
      requestBody: CreateWebhookBody,
      responses: { '201': { description: 'the webhook (secret only when generated)', schema: CreatedWebhookSchema } },
    },
  };
}
