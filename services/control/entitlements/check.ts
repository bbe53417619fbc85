import type { RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { hasScope } from '../../../shared/auth/types.js';
import { InsufficientScopeError } from '../../../shared/errors.js';
import { CheckAnswerSchema, CheckEntitlementQuery } from '../../../shared/api/entitlements.js';
import { BOOLEAN_ACCESS, NO_ACCESS, type Access } from '../../domain/entitlements/access.js';
import type { EntitlementTable } from '../../domain/entitlements/table.js';
import { parseCheck } from './input.js';
import { checkAnswerText } from './representation.js';

/**
 * GET /v1/entitlements/check?feature=&customer= — answered from the api's in-memory table (no Postgres, no
 * ClickHouse). `customer` (external id or `cus_` id) is the operator's choice; a customer's own token leaves it out
 * or names itself — naming anyone else, known or not, is 403, so no token learns who exists.
 */
export function checkEntitlementRoute(table: EntitlementTable): RouteDef<CheckEntitlementQuery> {
  // One text per answer object: a metered answer is rebuilt once per usage refresh, not per check.
  const texts = new WeakMap<Access, string>();
  return {
    method: 'GET',
    path: '/v1/entitlements/check',
    auth: 'read',
    input: parseCheck,
    handler: (ctx, q) => {
      const principal = ctx.principal!;
      let accountId: string | undefined = principal.accountId;
      if (q.customer !== undefined) {
        accountId = table.accountOf(q.customer);
        if (accountId !== principal.accountId && !hasScope(principal, 'admin'))
          throw new InsufficientScopeError('admin');
      }
      const found = accountId === undefined ? undefined : table.check(accountId, q.feature);
      if (!found) return reply.jsonText(200, checkAnswerText(q.feature, NO_ACCESS, true));
      if (found.access === BOOLEAN_ACCESS) return reply.jsonText(200, checkAnswerText(q.feature, BOOLEAN_ACCESS));
      let text = texts.get(found.access);
      if (text === undefined) texts.set(found.access, (text = checkAnswerText(q.feature, found.access)));
      return reply.jsonText(200, text);
    },
    doc: {
      summary: 'May this customer use the feature now? (answered from memory; usage within about a second)',
      tags: ['entitlements'],
      query: CheckEntitlementQuery,
      responses: { '200': { description: 'The answer', schema: CheckAnswerSchema } },
    },
  };
}
