import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateCreditGrantBody, CreditGrantSchema } from '../../../shared/api/credits.js';
import { toCreditGrant } from './representation.js';
import type { NewCreditGrant } from '../../domain/credits/types.js';
import { parseNewCreditGrant } from './input.js';
import { insertCreditGrant } from '../../domain/credits/store.js';

/**
 * POST /v1/billing/credits — an operator (admin scope) grants prepaid credit to an account; a customer never
 * grants itself credit. The billing run applies it to the account's invoices (services/domain/billing/credits.ts).
 */
export function createCreditGrantRoute(deps: ApiDeps): RouteDef<NewCreditGrant> {
  return {
    method: 'POST',
    path: '/v1/billing/credits',
    auth: 'admin',
    input: (ctx) => parseNewCreditGrant(ctx),
    handler: async (_ctx, grant) => {
      const row = await insertCreditGrant(deps.pg, grant);
      return reply.created(toCreditGrant(row), `/v1/billing/credits/${row.id}`);
    },
    doc: {
      summary: 'Grant prepaid credit to an account (operators only)',
      tags: ['billing'],
      requestBody: CreateCreditGrantBody,
      responses: {
        '201': {
          description:
            'The grant (Location names it); applied to the account’s next invoices in its currency, oldest-expiring first',
          schema: CreditGrantSchema,
        },
      },
    },
  };
}
