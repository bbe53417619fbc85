import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';

/** The Stripe processor's rows (infra/migrations/postgres/690_stripe.sql): each account's Stripe Customer, applied events. */

export async function stripeCustomerOf(pg: PgPool, accountId: string): Promise<string | undefined> {
  const r = await pg.query<{ customer_id: string }>('SELECT customer_id FROM stripe_customers WHERE account_id = $1', [
    accountId,
  ]);
  return r.rows[0]?.customer_id;
}

/** Records the account's Customer unless one is on record; returns the one on record (two racing makers agree). */
export async function recordStripeCustomer(pg: PgPool, accountId: string, customerId: string): Promise<string> {
  const r = await pg.query<{ customer_id: string }>(
    `WITH ins AS (INSERT INTO stripe_customers (account_id, customer_id) VALUES ($1, $2)
                  ON CONFLICT (account_id) DO NOTHING RETURNING customer_id)
     SELECT customer_id FROM ins UNION ALL SELECT customer_id FROM stripe_customers WHERE account_id = $1`,
    [accountId, customerId],
  );
  return r.rows[0]!.customer_id;
}

/** Claims a Stripe event for this transaction: false when it was already applied (a duplicate delivery). */
export async function claimStripeEvent(client: PgClient, eventId: string, type: string): Promise<boolean> {
  const r = await client.query('INSERT INTO stripe_events (event_id, type) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    eventId,
    type,
  ]);
  return r.rowCount === 1;
}
