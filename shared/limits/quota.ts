import type { PgClient } from '../clients/postgres.js';
import { ConflictError, NotFoundError } from '../errors.js';

/** What an account may hold a bounded number of; each is a table with an `account_id` column. */
export type QuotaKind = 'meters' | 'webhooks' | 'payment_methods';

const NOUN: Record<QuotaKind, string> = {
  meters: 'meters',
  webhooks: 'webhook endpoints',
  payment_methods: 'payment methods',
};

/**
 * Inside the transaction that adds one `kind` row for `accountId`: locks the account row (so two concurrent
 * additions can't both see room for one) and throws ConflictError `quota_exceeded` (409) when the account
 * already holds `max`; NotFoundError when the account no longer exists.
 */
export async function reserveQuota(c: PgClient, kind: QuotaKind, accountId: string, max: number): Promise<void> {
  const account = await c.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  if (account.rowCount !== 1) throw new NotFoundError('The account no longer exists.');
  const held = (
    await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${kind} WHERE account_id = $1`, [accountId])
  ).rows[0]!.n;
  if (held >= max)
    throw new ConflictError(
      `This account already has ${held} ${NOUN[kind]}, its limit is ${max}; remove one or ask the operator for a higher limit.`,
      'quota_exceeded',
    );
}
