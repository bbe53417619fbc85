import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { hashPassword } from '../../../shared/auth/password.js';
import { newId } from '../../../shared/ids.js';
import { ConflictError, ValidationError, type FieldError } from '../../../shared/errors.js';

export interface CreatedAccount {
  account_id: string;
  customer_id: string;
  user_id: string;
}

/** `local@domain.tld`: one `@`, no whitespace, a dot inside the domain. Linear scans, no backtracking regex. */
function looksLikeEmail(s: string): boolean {
  const at = s.indexOf('@');
  if (at < 1 || at !== s.lastIndexOf('@') || /\s/.test(s)) return false;
  const dot = s.indexOf('.', at + 2);
  return dot !== -1 && dot < s.length - 1;
}

export async function createAccount(
  pg: PgPool,
  input: { name: string; email: string; password: string; operator?: boolean },
): Promise<CreatedAccount> {
  const errors: FieldError[] = [];
  if (!input.name?.trim() || input.name.length > 200)
    errors.push({ field: 'name', message: 'must be 1–200 characters' });
  if (typeof input.email !== 'string' || input.email.length > 320 || !looksLikeEmail(input.email))
    errors.push({ field: 'email', message: 'must be an email address' });
  if ((input.password ?? '').length < 8 || input.password.length > 1024)
    errors.push({ field: 'password', message: 'must be 8–1024 characters' });
  if (errors.length) throw new ValidationError(errors);
  const passwordHash = await hashPassword(input.password);
  const ids = { account_id: newId('acct'), customer_id: newId('cus'), user_id: newId('usr') };
  try {
    await withTransaction(pg, async (c) => {
      await c.query('INSERT INTO accounts (id, customer_id, name) VALUES ($1, $2, $3)', [
        ids.account_id,
        ids.customer_id,
        input.name.trim(),
      ]);
      await c.query(
        'INSERT INTO users (id, account_id, email, password_hash, is_operator) VALUES ($1, $2, $3, $4, $5)',
        [ids.user_id, ids.account_id, input.email.trim(), passwordHash, input.operator ?? false],
      );
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new ConflictError('A user with this email already exists.', 'email_taken', [
        { field: 'email', message: 'already registered' },
      ]);
    throw err;
  }
  return ids;
}

export async function accountExists(pg: PgPool, accountId: string): Promise<boolean> {
  const r = await pg.query('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
  return r.rowCount === 1;
}
