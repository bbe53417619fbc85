import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import type { Revocation } from '../../../shared/auth/revocations.js';
import type { OperatorRole } from '../../../shared/auth/roles.js';
import type { RowWindow } from '../../../shared/row-window.js';

/** A user of the operator's account, with its role (docs/roles.md). */
export interface OperatorUser {
  id: string;
  account_id: string;
  email: string;
  role: OperatorRole;
  created_at: Date;
}

const COLUMNS = 'id, account_id, email, role, created_at';

/** The role a user's tokens carry: its role when it is an operator, else null (a customer's people have none). */
export async function operatorRoleOf(c: PgClient | PgPool, userId: string): Promise<OperatorRole | null> {
  const { rows } = await c.query<{ role: OperatorRole; is_operator: boolean }>(
    'SELECT role, is_operator FROM users WHERE id = $1',
    [userId],
  );
  return rows[0]?.is_operator ? rows[0].role : null;
}

/** The operator account's users, oldest first. */
export async function listOperatorUsers(
  pg: PgPool,
  accountId: string,
  window: RowWindow,
): Promise<{ rows: OperatorUser[]; total: number }> {
  return selectPage<OperatorUser>(
    pg,
    {
      columns: COLUMNS,
      from: 'users',
      where: 'account_id = $1 AND is_operator',
      params: [accountId],
      orderBy: 'created_at, id',
    },
    window,
  );
}

export async function lockOperatorUser(
  c: PgClient,
  accountId: string,
  userId: string,
): Promise<OperatorUser | undefined> {
  const { rows } = await c.query<OperatorUser>(
    `SELECT ${COLUMNS} FROM users WHERE id = $1 AND account_id = $2 AND is_operator FOR UPDATE`,
    [userId, accountId],
  );
  return rows[0];
}

/** The account's owners, locked: two demotions at once can't both see another owner left. */
export async function countOwnersForUpdate(c: PgClient, accountId: string): Promise<number> {
  const { rows } = await c.query(
    `SELECT id FROM users WHERE account_id = $1 AND is_operator AND role = 'owner' ORDER BY id FOR UPDATE`,
    [accountId],
  );
  return rows.length;
}

export async function updateUserRole(c: PgClient, userId: string, role: OperatorRole): Promise<OperatorUser> {
  const { rows } = await c.query<OperatorUser>(`UPDATE users SET role = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [
    userId,
    role,
  ]);
  return rows[0]!;
}

/** Revokes the user's live access tokens (not its grants: its apps refresh and get tokens of the new role). */
export async function revokeUserAccessTokens(c: PgClient, userId: string): Promise<Revocation[]> {
  const { rows } = await c.query<{ jti: string; exp: number }>(
    `UPDATE oauth_access_tokens SET revoked_at = now()
      WHERE grant_id IN (SELECT id FROM oauth_grants WHERE user_id = $1) AND revoked_at IS NULL AND expires_at > now()
      RETURNING jti, extract(epoch FROM expires_at)::bigint AS exp`,
    [userId],
  );
  return rows.map((r) => ({ jti: r.jti, exp: Number(r.exp) }));
}
