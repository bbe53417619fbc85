import type { PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { hashPassword } from '../../../shared/auth/password.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { looksLikeEmail } from '../../../shared/strings.js';
import { insertAccount } from '../customers/store.js';
import { insertUser } from '../customers/sign-ins-store.js';
import type { CustomerRegistryWriter } from '../customers/registry-writer.js';

export interface CreatedAccount {
  account_id: string;
  customer_id: string;
  user_id: string;
}

/**
 * `meterline accounts create`: an account (a customer without an external id, docs/design.md §6) and its first
 * user. With `registry` the account is in the customer registry before this returns; without it the api's
 * periodic reconciliation adds it within minutes.
 */
export async function createAccount(
  pg: PgPool,
  input: { name: string; email: string; password: string; operator?: boolean },
  registry?: CustomerRegistryWriter,
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
  return withTransaction(pg, async (c) => {
    const ids = await insertAccount(c, { name: input.name.trim(), externalId: null, email: null, metadata: {} });
    const user = await insertUser(c, {
      accountId: ids.account_id,
      email: input.email,
      passwordHash,
      isOperator: input.operator ?? false,
    });
    await registry?.write(c, ids.account_id);
    return { ...ids, user_id: user.id };
  });
}

export async function accountExists(pg: PgPool, accountId: string): Promise<boolean> {
  const r = await pg.query('SELECT 1 FROM accounts WHERE id = $1', [accountId]);
  return r.rowCount === 1;
}
