import { randomBytes } from 'node:crypto';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { hashPassword } from '../../../shared/auth/password.js';
import { newId } from '../../../shared/ids.js';
import { ConflictError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { accountOfCustomer } from './store.js';
import type { NewSignIn, SignInRow } from './types.js';

/**
 * A customer's sign-ins: users of its account, who sign in on the OAuth pages (the console, OAuth apps) and
 * grant access to that account only. Never operators: only the CLI's `accounts create --operator` makes those.
 */
export async function insertUser(
  c: PgClient | PgPool,
  u: { accountId: string; email: string; passwordHash: string; isOperator: boolean },
): Promise<SignInRow> {
  try {
    const { rows } = await c.query<SignInRow>(
      `INSERT INTO users (id, account_id, email, password_hash, is_operator) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, (SELECT customer_id FROM accounts WHERE id = $2) AS customer_id, email, created_at`,
      [newId('usr'), u.accountId, u.email.trim(), u.passwordHash, u.isOperator],
    );
    return rows[0]!;
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new ConflictError('A user with this email already exists.', 'email_taken', [
        { field: 'email', message: 'already registered' },
      ]);
    throw err;
  }
}

/** A password for a sign-in made without one: 24 URL-safe characters (144 bits), shown once. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

export async function addSignIn(
  pool: PgPool,
  customerId: string,
  s: NewSignIn,
): Promise<{ row: SignInRow; generatedPassword?: string }> {
  const accountId = await accountOfCustomer(pool, customerId);
  const password = s.password ?? generatePassword();
  const row = await insertUser(pool, {
    accountId,
    email: s.email,
    passwordHash: await hashPassword(password),
    isOperator: false,
  });
  return { row, generatedPassword: s.password === undefined ? password : undefined };
}

export async function listSignIns(
  pool: PgPool,
  customerId: string,
  window: RowWindow,
): Promise<{ rows: SignInRow[]; total: number }> {
  const accountId = await accountOfCustomer(pool, customerId);
  return selectPage<SignInRow>(
    pool,
    {
      columns: 'u.id, a.customer_id, u.email, u.created_at',
      from: 'users u JOIN accounts a ON a.id = u.account_id',
      where: 'u.account_id = $1',
      params: [accountId],
      orderBy: 'u.created_at DESC, u.id DESC',
    },
    window,
  );
}
