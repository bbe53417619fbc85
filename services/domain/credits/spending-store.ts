import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { SpendableGrant } from './types.js';

/**
 * Spending prepaid credit, the SQL (billing's rules are services/domain/billing/credits.ts, which grant pays which
 * invoice, and deductions.ts, an excess given back): the grants an invoice may take from, locked in the issuing
 * transaction, what it took, and the grants that return an excess.
 */

const SPENDABLE = `SELECT id, account_id, currency, remaining::text AS remaining, expires_at, created_at FROM credit_grants
   WHERE account_id = ANY($1) AND remaining > 0 AND (expires_at IS NULL OR expires_at > $2)`;

/** The accounts' spendable grants at `now`, locked in id order (no deadlock between runs) until the transaction ends. */
export async function lockSpendableGrants(client: PgClient, accounts: string[], now: Date): Promise<SpendableGrant[]> {
  return (await client.query<SpendableGrant>(`${SPENDABLE} ORDER BY id FOR UPDATE`, [accounts, now])).rows;
}

/** The accounts' spendable grants at `now`, nothing locked. */
export async function spendableGrants(pg: PgPool, accountIds: string[], now: Date): Promise<SpendableGrant[]> {
  return (await pg.query<SpendableGrant>(SPENDABLE, [accountIds, now])).rows;
}

/** Takes what each invoice spent (`grantIds[i]` gave `amounts[i]` to `invoiceIds[i]`) off the grants and into the ledger. */
export async function recordSpending(
  client: PgClient,
  grantIds: string[],
  invoiceIds: string[],
  amounts: string[],
): Promise<void> {
  await client.query(
    `UPDATE credit_grants g SET remaining = g.remaining - u.amount
       FROM (SELECT grant_id, sum(amount) AS amount FROM unnest($1::text[], $2::numeric[]) AS x(grant_id, amount) GROUP BY grant_id) u
      WHERE g.id = u.grant_id`,
    [grantIds, amounts],
  );
  await client.query(
    `INSERT INTO credit_applications (grant_id, invoice_id, amount) SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[])`,
    [grantIds, invoiceIds, amounts],
  );
}

/** Grants of credit given back (their whole amount remaining), with the ids the invoices' credit lines name. */
export async function insertReturnedGrants(
  client: PgClient,
  grants: readonly { id: string; account_id: string; currency: string; amount: string; description: string }[],
): Promise<void> {
  await client.query(
    `INSERT INTO credit_grants (id, account_id, currency, amount, remaining, description)
     SELECT id, account_id, currency, amount, amount, description FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[])
            AS g(id, account_id, currency, amount, description)`,
    [
      grants.map((g) => g.id),
      grants.map((g) => g.account_id),
      grants.map((g) => g.currency),
      grants.map((g) => g.amount),
      grants.map((g) => g.description),
    ],
  );
}
