import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../../shared/errors.js';
import type { Revocation } from '../../../shared/auth/revocations.js';
import type { OperatorRole } from '../../../shared/auth/roles.js';
import {
  countOwnersForUpdate,
  lockOperatorUser,
  revokeUserAccessTokens,
  updateUserRole,
  type OperatorUser,
} from './roles-store.js';

export { OPERATOR_ROLES, isOperatorRole, type OperatorRole } from '../../../shared/auth/roles.js';
export { listOperatorUsers, operatorRoleOf, type OperatorUser } from './roles-store.js';

/** Who asks for a role change: a user of the operator's account, with its own role (null: the CLI, the deployment's owner). */
export interface RoleChanger {
  accountId: string;
  role: OperatorRole | null;
}

/**
 * Sets a user's role (docs/roles.md) — the one rule every entry point uses (the API, SSO's claim mapping):
 * - only an owner or an admin changes roles, and only an owner makes or unmakes an owner;
 * - the user must be one of the operator account's users (anyone else: 404, like an unknown id);
 * - the account's last owner can't be demoted (409 `last_owner`): the owners are locked while counted;
 * - the user's live access tokens are revoked in the same transaction, so the new role holds at once
 *   (its apps refresh and get tokens carrying the new role); `revoked` is what the caller replicates to the
 *   revocation list after commit.
 * The users row's change is audited like any write (docs/audit.md).
 */
export async function setUserRole(
  pg: PgPool,
  changer: RoleChanger,
  userId: string,
  role: OperatorRole,
): Promise<{ user: OperatorUser; revoked: Revocation[] }> {
  if (changer.role !== null && changer.role !== 'owner' && changer.role !== 'admin')
    throw new ForbiddenError('Only an owner or an admin changes roles.', 'role_forbidden');
  return withTransaction(pg, async (c) => {
    const user = await lockOperatorUser(c, changer.accountId, userId);
    if (!user) throw new NotFoundError();
    if (user.role === role) return { user, revoked: [] };
    const ownerInvolved = user.role === 'owner' || role === 'owner';
    if (ownerInvolved && changer.role !== null && changer.role !== 'owner')
      throw new ForbiddenError('Only an owner makes or unmakes an owner.', 'role_forbidden', [
        { field: 'role', message: 'only an owner grants or removes the owner role' },
      ]);
    if (user.role === 'owner' && (await countOwnersForUpdate(c, changer.accountId)) <= 1)
      throw new ConflictError('The last owner of the account can’t be given another role.', 'last_owner', [
        { field: 'role', message: 'the account needs at least one owner' },
      ]);
    const changed = await updateUserRole(c, userId, role);
    const revoked = await revokeUserAccessTokens(c, userId);
    return { user: changed, revoked };
  });
}
