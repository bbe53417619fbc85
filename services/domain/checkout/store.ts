import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import type { CheckoutSessionRow, NewCheckoutSession } from './types.js';

/** Checkout sessions' SQL (docs/checkout.md). */
const COLUMNS = `id, plan_id, plan_version, account_id, customer_email, success_url, cancel_url, trial_days, coupon_id,
  allow_promotion_codes, status, subscription_id, promotion_code_id, expires_at, completed_at, created_at`;
export const checkoutNotFound = (id: string) => new NotFoundError(`No checkout session ${id}.`);

export async function insertCheckoutSession(q: PgPool | PgClient, s: NewCheckoutSession): Promise<CheckoutSessionRow> {
  const { rows } = await q.query<CheckoutSessionRow>(
    `INSERT INTO checkout_sessions (id, plan_id, plan_version, account_id, customer_email, success_url, cancel_url,
                                    trial_days, coupon_id, allow_promotion_codes, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${COLUMNS}`,
    [
      newId('cs'),
      s.plan_id,
      s.plan_version,
      s.account_id,
      s.customer_email,
      s.success_url,
      s.cancel_url,
      s.trial_days,
      s.coupon_id,
      s.allow_promotion_codes,
      s.expires_at,
    ],
  );
  return rows[0]!;
}

/** The session, or null; `lock`: FOR UPDATE, in the caller's transaction (completion and the customer's creation). */
export async function findCheckoutSession(
  q: PgPool | PgClient,
  id: string,
  opts: { lock?: boolean } = {},
): Promise<CheckoutSessionRow | null> {
  if (!hasPrefix(id, 'cs')) return null;
  const { rows } = await q.query<CheckoutSessionRow>(
    `SELECT ${COLUMNS} FROM checkout_sessions WHERE id = $1${opts.lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ?? null;
}

export async function setCheckoutAccount(client: PgClient, id: string, accountId: string): Promise<void> {
  await client.query(`UPDATE checkout_sessions SET account_id = $2 WHERE id = $1 AND account_id IS NULL`, [
    id,
    accountId,
  ]);
}

export async function markCheckoutComplete(
  client: PgClient,
  id: string,
  done: { subscriptionId: string; promotionCodeId: string | null; at: Date },
): Promise<CheckoutSessionRow> {
  const { rows } = await client.query<CheckoutSessionRow>(
    `UPDATE checkout_sessions SET status = 'complete', subscription_id = $2, promotion_code_id = $3, completed_at = $4
      WHERE id = $1 AND status = 'open' RETURNING ${COLUMNS}`,
    [id, done.subscriptionId, done.promotionCodeId, done.at],
  );
  return rows[0]!;
}

/** The email a named customer's checkout page shows. */
export async function customerEmailOf(q: PgPool | PgClient, accountId: string): Promise<string | null> {
  const { rows } = await q.query<{ email: string | null }>(`SELECT email FROM accounts WHERE id = $1`, [accountId]);
  return rows[0]?.email ?? null;
}
