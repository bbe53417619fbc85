import type { RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import { BillingInfoSchema } from './schemas.js';
import { getBillingInfo } from './store.js';

export function getBillingRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing',
    auth: 'read',
    handler: async (ctx) => {
      const info = await getBillingInfo(deps.pg, ctx.principal!.accountId);
      if (!info) throw new NotFoundError('The account no longer exists.');
      return { status: 200, body: info };
    },
    doc: {
      summary: "The account's customer id, default payment method and billing address",
      tags: ['billing'],
      responses: { '200': { description: 'billing information', schema: BillingInfoSchema } },
    },
  };
}
