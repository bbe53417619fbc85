import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreditTopUpSchema } from '../../../shared/api/credit-top-ups.js';
import { getTopUp } from '../../domain/credits/top-ups-store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';
import { toCreditTopUp } from './representation.js';

/** GET /v1/credit_top_ups/:top_up_id — one of the caller's top-ups (404 for another account's). */
export function getCreditTopUpRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/credit_top_ups/:top_up_id',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.top_up_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'credit_top_up', id);
      return reply.ok(toCreditTopUp(await getTopUp(deps.pg, accountId, id)));
    },
    doc: {
      summary: 'Get a credit top-up: its status, invoice and grant',
      tags: ['billing'],
      responses: { '200': { description: 'The top-up', schema: CreditTopUpSchema } },
    },
  };
}
