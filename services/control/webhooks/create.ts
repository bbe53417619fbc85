import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { parseCreateWebhook } from './parse.js';
import { CreateWebhookBody, CreatedWebhookSchema } from './schemas.js';
import { generateWebhookSecret, sealWebhookSecret, webhookSecretKey } from './secret.js';
import { insertWebhook } from './store.js';
import { syncUsageSubscriberQuietly } from './usage-subscribers.js';

export function createWebhookRoute(deps: ApiDeps): RouteDef {
  const key = webhookSecretKey(deps.config.SECRET_KEY);
  return {
    method: 'POST',
    path: '/v1/webhooks',
    auth: 'write',
    handler: async (ctx) => {
      const input = parseCreateWebhook(ctx.body, deps.config.WEBHOOKS_ALLOW_PRIVATE_URLS);
      const generated = input.secret === undefined ? generateWebhookSecret() : undefined;
      const secret = input.secret ?? generated!;
      const webhook = await insertWebhook(deps.pg, ctx.principal!.accountId, { url: input.url, events: input.events, secretSealed: sealWebhookSecret(key, secret) }, deps.protection.limits(ctx.principal!.accountId).max_webhooks);
      if (!webhook) throw new NotFoundError('The account no longer exists.');
      await syncUsageSubscriberQuietly(deps, ctx.principal!.accountId);
      // A caller-supplied secret is write-only; a generated one is shown this once.
      const body = generated ? { ...webhook, secret: generated } : webhook;
      return { status: 201, body, headers: { Location: `/v1/webhooks/${webhook.id}` } };
    },
    doc: {
      summary: 'Register a webhook. Without `secret` the server generates one and returns it once, in this response.',
      tags: ['webhooks'],
      requestBody: CreateWebhookBody,
      responses: { '201': { description: 'the webhook (secret only when generated)', schema: CreatedWebhookSchema } },
    },
  };
}
