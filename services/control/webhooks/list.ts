import Type from 'typebox';
import type { RouteDef } from '../../../shared/http/route.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { PaginationQuery, listOf, pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { WebhookSchema } from './schemas.js';
import { listWebhooks } from './store.js';

export const ListQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export const listQuery = queryValidator<Type.Static<typeof ListQuery>>(ListQuery);

export function listWebhooksRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/webhooks',
    auth: 'read',
    input: (ctx) => listQuery.parseQuery(ctx.query),
    handler: async (ctx, page) => {
      const { data, total } = await listWebhooks(deps.pg, ctx.principal!.accountId, pageWindow(page));
      return reply.page(data, page, total);
    },
    doc: {
      summary: "List the account's webhooks, newest first",
      tags: ['webhooks'],
      query: ListQuery,
      responses: { '200': { description: 'a page of webhooks', schema: listOf(WebhookSchema) } },
    },
  };
}
