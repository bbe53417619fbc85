import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { BillingInfoSchema, UpdateBillingBody } from '../../../shared/api/billing-info.js';
import type { BillingAddress } from '../../domain/billing-info/types.js';
import { parseBillingAddress } from './input.js';
import { getBillingInfo, putBillingAddress } from '../../domain/billing-info/store.js';

/** PATCH /v1/billing — replaces the billing address; answers with the whole billing information. */
export function updateBillingRoute(deps: ApiDeps): RouteDef<BillingAddress> {
  return {
    method: 'PATCH',
    path: '/v1/billing',
    auth: 'write',
    input: parseBillingAddress,
    handler: async (ctx, address) => {
      const accountId = ctx.principal!.accountId;
      await putBillingAddress(deps.pg, accountId, address);
      return reply.ok(await getBillingInfo(deps.pg, accountId));
    },
    doc: {
      summary: 'Replace the billing address (line1, city, state, zip: each 1–200 characters, all required)',
      tags: ['billing'],
      requestBody: UpdateBillingBody,
      responses: { '200': { description: 'the updated billing information', schema: BillingInfoSchema } },
    },
  };
}
