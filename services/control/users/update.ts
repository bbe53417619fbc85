import type { KV } from '@nats-io/kv';
import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import type { OperatorRole } from '../../../shared/auth/roles.js';
import { publishRevocations } from '../../../shared/auth/revocations.js';
import { OperatorUserSchema, UpdateUserBody } from '../../../shared/api/users.js';
import { setUserRole } from '../../domain/accounts/roles.js';
import { markRevocationsPublished } from '../../domain/oauth/tokens-store.js';
import { parseUserRole } from './input.js';
import { toOperatorUser } from './representation.js';

/**
 * PATCH /v1/users/:user_id {role} (admin; an owner or admin) — sets a user's role (docs/roles.md). The user's
 * access tokens are revoked with the change; they reach the revocation list now, or through the OAuth
 * housekeeping when NATS is away.
 */
export function updateUserRoute(deps: ApiDeps, revocations: () => Promise<KV>): RouteDef<OperatorRole> {
  return {
    method: 'PATCH',
    path: '/v1/users/:user_id',
    auth: 'admin',
    input: parseUserRole,
    handler: async (ctx, role) => {
      const p = ctx.principal!;
      const { user, revoked } = await setUserRole(
        deps.pg,
        { accountId: p.accountId, role: p.role ?? null },
        ctx.params.user_id!,
        role,
      );
      if (revoked.length) {
        try {
          await publishRevocations(await revocations(), revoked);
          await markRevocationsPublished(
            deps.pg,
            revoked.map((r) => r.jti),
          );
        } catch (err) {
          deps.log.error(
            { err, count: revoked.length },
            'revocations of a role change not yet replicated; housekeeping retries',
          );
        }
      }
      return reply.ok(toOperatorUser(user));
    },
    doc: {
      summary: "Set a user's role (owners and admins; only an owner makes or unmakes an owner; the last owner stays)",
      tags: ['users'],
      requestBody: UpdateUserBody,
      responses: { '200': { description: 'The user', schema: OperatorUserSchema } },
    },
  };
}
