import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { deleteWebhook } from './store.js';
import { syncUsageSubscriberQuietly } from './usage-subscribers.js';

export function deleteWebhookRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'DELETE',
    path: '/v1/webhooks/:webhook_id',
    auth: 'write',
    handler: async (ctx) => {
      if (!(await deleteWebhook(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!))) throw new NotFoundError('No such webhook.');
      await syncUsageSubscriberQuietly(deps, ctx.principal!.accountId);
      return { status: 204 };
    },
    doc: {
      summary: 'Remove a webhook and its delivery history; nothing more is delivered to it',
      tags: ['webhooks'],
      responses: { '204': { description: 'removed' } },
    },
  };
}
