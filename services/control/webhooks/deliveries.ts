import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { listOf, pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { parseListQuery } from './input.js';
import { DeliverySchema, ListWebhooksQuery } from '../../../shared/api/webhooks.js';
import { toDelivery } from './representation.js';
import { listDeliveries } from '../../domain/webhooks/store.js';

/** GET /v1/webhooks/:webhook_id/deliveries — the attempts, newest first. */
export function listDeliveriesRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/webhooks/:webhook_id/deliveries',
    auth: 'read',
    input: parseListQuery,
    handler: async (ctx, page) => {
      const { rows, total } = await listDeliveries(
        deps.pg,
        ctx.principal!.accountId,
        ctx.params.webhook_id!,
        pageWindow(page),
      );
      return reply.page(rows.map(toDelivery), page, total);
    },
    doc: {
      summary: 'Delivery attempts of a webhook, newest first',
      tags: ['webhooks'],
      query: ListWebhooksQuery,
      responses: { '200': { description: 'a page of delivery attempts', schema: listOf(DeliverySchema) } },
    },
  };
}
