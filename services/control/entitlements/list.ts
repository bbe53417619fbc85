import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { EntitlementListSchema, ListEntitlementsQuery } from '../../../shared/api/entitlements.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';
import { listEntitlements } from '../../domain/entitlements/store.js';
import { parseListEntitlements } from './input.js';
import { toEntitlement } from './representation.js';
import { entitlementScope } from './scope.js';

/** GET /v1/entitlements — an operator's: every customer's (`?customer_id=` one's); a customer's: its own. */
export function listEntitlementsRoute(deps: ApiDeps): RouteDef<ListEntitlementsQuery> {
  return {
    method: 'GET',
    path: '/v1/entitlements',
    auth: 'read',
    input: parseListEntitlements,
    handler: async (ctx, q) => {
      const accountId =
        q.customer_id === undefined ? undefined : await accountActedFor(deps.pg, ctx.principal!, q.customer_id);
      const { rows, total } = await listEntitlements(
        deps.pg,
        entitlementScope(ctx.principal!),
        { accountId, feature: q.feature },
        pageWindow(q),
      );
      return reply.page(rows.map(toEntitlement), q, total);
    },
    doc: {
      summary: 'List entitlements, newest first (a customer’s token: its own)',
      tags: ['entitlements'],
      query: ListEntitlementsQuery,
      responses: { '200': { description: 'A page of entitlements', schema: EntitlementListSchema } },
    },
  };
}
