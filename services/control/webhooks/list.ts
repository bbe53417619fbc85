import Type from 'typebox';
import type { RouteDef } from '../../../shared/http/server.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { PaginationQuery, limitOffset, listOf, pageOf } from '../../../shared/http/pagination.js';
import type { ApiDeps } from '../../api/modules.js';
import { WebhookSchema } from './schemas.js';
import { listWebhooks } from './store.js';

export const ListQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export const listQuery = queryValidator<Type.Static<typeof ListQuery>>(ListQuery);

export function listWebhooksRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/webhooks',
    auth: 'read',
    handler: async (ctx) => {
      const q = listQuery.parseQuery(ctx.query);
      const [limit, offset] = limitOffset(q.page, q.per_page);
      const { data, total } = await listWebhooks(deps.pg, ctx.principal!.accountId, limit, offset);
      return { status: 200, body: pageOf(data, q.page, q.per_page, total) };
    },
    doc: {
      summary: "List the account's webhooks, newest first",
      tags: ['webhooks'],
      query: ListQuery,
      responses: { '200': { description: 'a page of webhooks', schema: listOf(WebhookSchema) } },
    },
  };
}
