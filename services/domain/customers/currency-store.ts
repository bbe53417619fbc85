import type { PgClient } from '../../../shared/clients/postgres.js';
import { ConflictError } from '../../../shared/errors.js';

/**
 * A customer's currency (price books, docs/plans.md "Price books"): the book its subscriptions are priced from. Set
 * explicitly (customer create or PATCH) or fixed by its first subscription; once it has a subscription it stays.
 */

/** The customer's currency, null while not chosen. The caller holds the account's row lock (subscribe). */
export async function customerCurrency(client: PgClient, accountId: string): Promise<string | null> {
  const { rows } = await client.query<{ currency: string | null }>('SELECT currency FROM accounts WHERE id = $1', [
    accountId,
  ]);
  return rows[0]?.currency ?? null;
}

/** Fixes the currency of a customer that had none (its first subscription's); a chosen one is left as it is. */
export async function fixCustomerCurrency(client: PgClient, accountId: string, currency: string): Promise<void> {
  await client.query('UPDATE accounts SET currency = $2, updated_at = now() WHERE id = $1 AND currency IS NULL', [
    accountId,
    currency,
  ]);
}

/**
 * THE rule of changing a customer's currency (PATCH, in its transaction): the same currency changes nothing; another
 * one only while the customer has no subscription (one subscription, one currency: its invoices, credits and
 * coupons are in it) — else 409 customer_currency_locked. Locks the account row first, as subscribing does.
 */
export async function setCustomerCurrency(client: PgClient, accountId: string, currency: string): Promise<void> {
  const { rows } = await client.query<{ currency: string | null; subscribed: boolean }>(
    `SELECT currency, EXISTS (SELECT 1 FROM subscriptions s WHERE s.account_id = a.id) AS subscribed
       FROM accounts a WHERE id = $1 FOR UPDATE`,
    [accountId],
  );
  const row = rows[0];
  if (!row || row.currency === currency) return;
  if (row.subscribed)
    throw new ConflictError(
      `The customer bills in ${row.currency ?? 'the currency of its subscriptions'}: its currency can't change once it has a subscription.`,
      'customer_currency_locked',
      [{ field: 'currency', message: `is ${row.currency ?? 'fixed'} since its first subscription` }],
    );
  await client.query('UPDATE accounts SET currency = $2, updated_at = now() WHERE id = $1', [accountId, currency]);
}
