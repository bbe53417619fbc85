import type { PgPool } from '../../../shared/clients/postgres.js';
import type { OperatorRole } from '../../../shared/auth/roles.js';
import { newId } from '../../../shared/ids.js';
import type { User } from '../accounts/users-store.js';

/**
 * The operator account SSO users join: the account of the deployment's first owner (`accounts create --operator`
 * makes it); null before there is one.
 */
export async function operatorAccountId(pg: PgPool): Promise<string | null> {
  const { rows } = await pg.query<{ account_id: string }>(
    `SELECT account_id FROM users WHERE is_operator AND role = 'owner' ORDER BY created_at, id LIMIT 1`,
  );
  return rows[0]?.account_id ?? null;
}

/** A new operator user with `role`; null when the email was taken meanwhile (a parallel first sign-in). */
export async function insertOperatorUser(
  pg: PgPool,
  u: { accountId: string; email: string; passwordHash: string; role: OperatorRole },
): Promise<User | null> {
  const { rows } = await pg.query<{ id: string; account_id: string; email: string }>(
    `INSERT INTO users (id, account_id, email, password_hash, is_operator, role) VALUES ($1, $2, $3, $4, true, $5)
     ON CONFLICT (lower(email)) DO NOTHING RETURNING id, account_id, email`,
    [newId('usr'), u.accountId, u.email, u.passwordHash, u.role],
  );
  const r = rows[0];
  return r ? { id: r.id, accountId: r.account_id, email: r.email, isOperator: true } : null;
}
