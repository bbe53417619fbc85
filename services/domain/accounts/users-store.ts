import type { PgPool } from '../../../shared/clients/postgres.js';
import { burnPasswordCheck, verifyPassword } from '../../../shared/auth/password.js';

/** A user who can sign in on the OAuth pages and grant access to their account. */
export interface User {
  id: string;
  accountId: string;
  email: string;
  isOperator: boolean;
}

interface UserRow {
  id: string;
  account_id: string;
  email: string;
  is_operator: boolean;
  password_hash: string;
}

const toUser = (r: UserRow): User => ({ id: r.id, accountId: r.account_id, email: r.email, isOperator: r.is_operator });

export async function findUserByEmail(pg: PgPool, email: string): Promise<User | null> {
  const { rows } = await pg.query<UserRow>(
    'SELECT id, account_id, email, is_operator, password_hash FROM users WHERE lower(email) = lower($1)',
    [email.trim()],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

/**
 * Email + password check. Unknown emails cost the same scrypt work as known ones, so timing does not
 * reveal which addresses have accounts.
 */
export async function verifyCredentials(pg: PgPool, email: string, password: string): Promise<User | null> {
  const { rows } = await pg.query<UserRow>(
    'SELECT id, account_id, email, is_operator, password_hash FROM users WHERE lower(email) = lower($1)',
    [email.trim()],
  );
  const row = rows[0];
  if (!row) return burnPasswordCheck(password).then(() => null);
  return (await verifyPassword(password, row.password_hash)) ? toUser(row) : null;
}

/** Whether anyone can sign in yet (`meterline up` prints how to create the first account when not). */
export async function anyUserExists(pg: PgPool): Promise<boolean> {
  const { rows } = await pg.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM users) AS any');
  return rows[0]?.any === true;
}
