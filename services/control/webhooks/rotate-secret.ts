import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreatedWebhookSchema } from '../../../shared/api/webhooks.js';
import { toWebhook } from './representation.js';
import { generateWebhookSecret, sealWebhookSecret, webhookSecretKey } from '../../domain/webhooks/secret.js';
import { PREVIOUS_SECRET_HOURS, rotateWebhookSecret } from '../../domain/webhooks/actions-store.js';

/** POST /v1/webhooks/:webhook_id/rotate-secret — a new generated secret, shown once; the old one signs 24 h more. */
export function rotateSecretRoute(deps: ApiDeps): RouteDef {
  const key = webhookSecretKey(deps.config.SECRET_KEY);
  return {
    method: 'POST',
    path: '/v1/webhooks/:webhook_id/rotate-secret',
    auth: 'write',
    body: 'none',
    handler: async (ctx) => {
      const secret = generateWebhookSecret();
      const webhook = await rotateWebhookSecret(
        deps.pg,
        ctx.principal!.accountId,
        ctx.params.webhook_id!,
        sealWebhookSecret(key, secret),
      );
      return reply.ok({ ...toWebhook(webhook), secret });
    },
    doc: {
      summary: `Generate a new signing secret, returned once in this response. For ${PREVIOUS_SECRET_HOURS} h both the new and the previous secret sign (two space-separated entries in webhook-signature); X-Webhook-Signature uses the new one`,
      tags: ['webhooks'],
      responses: {
        '200': { description: 'the webhook with its new secret (shown this once)', schema: CreatedWebhookSchema },
      },
    },
  };
}
