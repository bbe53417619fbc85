import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageOf, pageWindow } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { CreditGrantListSchema, ListCreditGrantsQuery } from '../../../shared/api/credits.js';
import { toCreditGrant } from './representation.js';
import { parseListCreditGrants } from './input.js';
import { listCreditGrants } from '../../domain/credits/store.js';
import { accountActedFor } from '../../domain/customers/acting-for.js';

/** GET /v1/billing/credits?page&per_page — the caller's grants, newest first, and its spendable balance. */
export function listCreditGrantsRoute(deps: ApiDeps): RouteDef<ListCreditGrantsQuery> {
  return {
    method: 'GET',
    path: '/v1/billing/credits',
    auth: 'read',
    input: parseListCreditGrants,
    handler: async (ctx, page) => {
      const accountId = await accountActedFor(deps.pg, ctx.principal!, page.customer_id);
      const { rows, total, balance } = await listCreditGrants(deps.pg, accountId, pageWindow(page), new Date());
      return reply.ok({
        ...pageOf(rows.map(toCreditGrant), page, total),
        balance: balance.map((b) => ({ currency: b.currency, amount: new JsonDecimal(b.amount) })),
      });
    },
    doc: {
      summary: 'List the account’s prepaid credit grants and its balance',
      tags: ['billing'],
      query: ListCreditGrantsQuery,
      responses: {
        '200': {
          description: 'A page of grants, newest first, and the balance per currency',
          schema: CreditGrantListSchema,
        },
      },
    },
  };
}
