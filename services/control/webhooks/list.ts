import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { listOf, pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { parseListQuery } from './input.js';
import { ListWebhooksQuery, WebhookSchema } from '../../../shared/api/webhooks.js';
import { toWebhook } from './representation.js';
import { listWebhooks } from '../../domain/webhooks/store.js';

/** GET /v1/webhooks — newest first. */
export function listWebhooksRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/webhooks',
    auth: 'read',
    input: parseListQuery,
    handler: async (ctx, page) => {
      const { rows, total } = await listWebhooks(deps.pg, ctx.principal!.accountId, pageWindow(page));
      return reply.page(rows.map(toWebhook), page, total);
    },
    doc: {
      summary: "List the account's webhooks, newest first",
      tags: ['webhooks'],
      query: ListWebhooksQuery,
      responses: { '200': { description: 'a page of webhooks', schema: listOf(WebhookSchema) } },
    },
  };
}
