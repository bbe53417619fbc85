import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreditGrantSchema } from '../../../shared/api/credits.js';
import { toCreditGrant } from './representation.js';
import { getCreditGrant } from '../../domain/credits/store.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

/** GET /v1/billing/credits/:credit_id — one of the caller's grants (404 for another account's). */
export function getCreditGrantRoute(deps: ApiDeps): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/credits/:credit_id',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.credit_id!;
      const accountId = await accountActingOn(deps.pg, ctx.principal!, 'credit_grant', id);
      return reply.ok(toCreditGrant(await getCreditGrant(deps.pg, accountId, id)));
    },
    doc: {
      summary: 'Get a prepaid credit grant with what remains of it',
      tags: ['billing'],
      responses: { '200': { description: 'The grant', schema: CreditGrantSchema } },
    },
  };
}
