import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { BillingInfoSchema } from '../../../shared/api/billing-info.js';
import { getBillingInfo } from '../../domain/billing-info/store.js';

/** GET /v1/billing — customer id, default payment method, billing address. */
export function getBillingRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing',
    auth: 'read',
    handler: async (ctx) => reply.ok(await getBillingInfo(deps.pg, ctx.principal!.accountId)),
    doc: {
      summary: "The account's customer id, default payment method and billing address",
      tags: ['billing'],
      responses: { '200': { description: 'billing information', schema: BillingInfoSchema } },
    },
  };
}
