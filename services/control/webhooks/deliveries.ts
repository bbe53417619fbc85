import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import { listOf, pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { ListQuery, listQuery } from './list.js';
import { DeliverySchema } from './schemas.js';
import { listDeliveries } from './store.js';

export function listDeliveriesRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/webhooks/:webhook_id/deliveries',
    auth: 'read',
    input: (ctx) => listQuery.parseQuery(ctx.query),
    handler: async (ctx, page) => {
      const found = await listDeliveries(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!, pageWindow(page));
      if (!found) throw new NotFoundError('No such webhook.');
      return reply.page(found.data, page, found.total);
    },
    doc: {
      summary: 'Delivery attempts of a webhook, newest first',
      tags: ['webhooks'],
      query: ListQuery,
      responses: { '200': { description: 'a page of delivery attempts', schema: listOf(DeliverySchema) } },
    },
  };
}
