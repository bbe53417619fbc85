import type { RouteDef } from '../../../shared/http/server.js';
import { NotFoundError } from '../../../shared/errors.js';
import { limitOffset, listOf, pageOf } from '../../../shared/http/pagination.js';
import type { ApiDeps } from '../../api/modules.js';
import { ListQuery, listQuery } from './list.js';
import { DeliverySchema } from './schemas.js';
import { listDeliveries } from './store.js';

export function listDeliveriesRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/webhooks/:webhook_id/deliveries',
    auth: 'read',
    handler: async (ctx) => {
      const q = listQuery.parseQuery(ctx.query);
      const [limit, offset] = limitOffset(q.page, q.per_page);
      const page = await listDeliveries(deps.pg, ctx.principal!.accountId, ctx.params.webhook_id!, limit, offset);
      if (!page) throw new NotFoundError('No such webhook.');
      return { status: 200, body: pageOf(page.data, q.page, q.per_page, page.total) };
    },
    doc: {
      summary: 'Delivery attempts of a webhook, newest first',
      tags: ['webhooks'],
      query: ListQuery,
      responses: { '200': { description: 'a page of delivery attempts', schema: listOf(DeliverySchema) } },
    },
  };
}
