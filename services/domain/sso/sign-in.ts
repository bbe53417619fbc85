import { randomBytes } from 'node:crypto';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { hashPassword } from '../../../shared/auth/password.js';
import type { OperatorRole } from '../../../shared/auth/roles.js';
import type { Revocation } from '../../../shared/auth/revocations.js';
import { ConflictError } from '../../../shared/errors.js';
import { findUserByEmail, type User } from '../accounts/users-store.js';
import { operatorRoleOf, setUserRole } from '../accounts/roles.js';
import type { SsoIdentity } from './identity.js';
import { insertOperatorUser, operatorAccountId } from './users-store.js';

/** Why a verified identity still signs no one in (docs/sso.md). */
export type SignInRefusal = 'not_operator' | 'no_operator_account' | 'last_owner';

export interface SsoSignIn {
  user: User;
  provisioned: boolean;
  /** The role before, when this sign-in changed it (the claim mapping is followed at every sign-in). */
  previousRole: OperatorRole | null;
  /** Access tokens the role change revoked, for the caller to replicate. */
  revoked: Revocation[];
}

/**
 * The operator user of a verified SSO identity: matched by email (case-insensitive), or provisioned in the operator
 * account with the mapped role; an existing user's role follows the claim through `setUserRole`, the one rule of
 * role changes (acting with the deployment's authority: the provider is the source of truth), so the last owner
 * is never demoted and the user's live tokens are revoked. A customer's sign-in with the same email is refused,
 * never turned into an operator. Writes are audited as the caller's actor.
 */
export async function signInWithSso(
  pg: PgPool,
  identity: SsoIdentity,
): Promise<SsoSignIn | { refusal: SignInRefusal }> {
  let user = await findUserByEmail(pg, identity.email);
  if (!user) {
    const accountId = await operatorAccountId(pg);
    if (!accountId) return { refusal: 'no_operator_account' };
    // A password nobody knows: the column is required, and an SSO user signs in through its provider.
    const passwordHash = await hashPassword(randomBytes(32).toString('base64url'));
    const created = await insertOperatorUser(pg, {
      accountId,
      email: identity.email,
      passwordHash,
      role: identity.role,
    });
    if (created) return { user: created, provisioned: true, previousRole: null, revoked: [] };
    user = await findUserByEmail(pg, identity.email);
    if (!user) throw new Error(`user ${identity.email} neither inserted nor found`);
  }
  if (!user.isOperator) return { refusal: 'not_operator' };
  const before = await operatorRoleOf(pg, user.id);
  if (before === identity.role) return { user, provisioned: false, previousRole: null, revoked: [] };
  try {
    const { revoked } = await setUserRole(pg, { accountId: user.accountId, role: null }, user.id, identity.role);
    return { user, provisioned: false, previousRole: before, revoked };
  } catch (err) {
    if (err instanceof ConflictError) return { refusal: 'last_owner' };
    throw err;
  }
}
