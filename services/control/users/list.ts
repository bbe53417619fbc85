import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { OperatorUserListSchema } from '../../../shared/api/users.js';
import { listOperatorUsers } from '../../domain/accounts/roles.js';
import { parseListUsers } from './input.js';
import { toOperatorUser } from './representation.js';

/** GET /v1/users (admin) — the operator account's users and their roles, oldest first. */
export function listUsersRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/users',
    auth: 'admin',
    input: parseListUsers,
    handler: async (ctx, page) => {
      const { rows, total } = await listOperatorUsers(deps.pg, ctx.principal!.accountId, pageWindow(page));
      return reply.page(rows.map(toOperatorUser), page, total);
    },
    doc: {
      summary: "The operator account's users and their roles",
      tags: ['users'],
      responses: { '200': { description: 'a page of users', schema: OperatorUserListSchema } },
    },
  };
}
