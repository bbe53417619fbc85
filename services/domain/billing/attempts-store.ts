import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { InvoiceStatus } from '../../../shared/vocabulary.js';
import { inScope } from './scope-sql.js';

/**
 * Payment attempts' SQL (the steps and their rules are payments.ts): invoices locked with the attempt they have open,
 * new attempts numbered, and what an attempt already made recorded. Each runs in the caller's transaction.
 */

/** An invoice locked for a payment attempt, with the attempt it has open (pending or unknown), if any. */
export interface LockedInvoice {
  id: string;
  account_id: string;
  amount: string;
  /** What is still owed: the amount less what credit notes took off it (services/domain/billing/credit-notes.ts). */
  amount_due: string;
  currency: string;
  status: InvoiceStatus;
  attempt_count: number;
  created_at: Date;
  /** When it is due (created + net terms): dunning counts from it. */
  due_at: Date;
  pending_attempt: number | null;
  pending_manual: boolean | null;
  pending_pm_id: string | null;
  pending_pm_token: string | null;
}

const LOCK_COLUMNS = `i.id, i.account_id, i.amount::text AS amount, (i.amount - i.amount_credited)::text AS amount_due, i.currency, i.status, i.attempt_count, i.created_at,
  COALESCE(i.due_at, i.created_at) AS due_at, pa.attempt AS pending_attempt, pa.manual AS pending_manual, pm.id AS pending_pm_id, pm.processor_token AS pending_pm_token
  FROM invoices i
  LEFT JOIN payment_attempts pa ON pa.invoice_id = i.id AND pa.status IN ('pending', 'unknown')
  LEFT JOIN payment_methods pm ON pm.id = pa.payment_method_id`;

/**
 * Locks up to `limit` of the scope's invoices due for an automatic attempt at `now` or with an attempt left pending,
 * in id order, skipping rows another run holds and the ids in `seen`.
 */
export async function lockDueInvoices(
  client: PgClient,
  now: Date,
  seen: string[],
  limit: number,
  clockId: string | null,
): Promise<LockedInvoice[]> {
  const r = await client.query<LockedInvoice>(
    `SELECT ${LOCK_COLUMNS}
            WHERE i.id IN (SELECT id FROM invoices WHERE status = 'open' AND next_payment_attempt_at <= $1
                           UNION SELECT invoice_id FROM payment_attempts WHERE status = 'pending')
              AND NOT (i.id = ANY($2)) AND ${inScope('i.account_id', '$4')}
            ORDER BY i.id LIMIT $3 FOR UPDATE OF i SKIP LOCKED`,
    [now, seen, limit, clockId],
  );
  return r.rows;
}

/** The earliest automatic attempt planned after `after` for the scope's open invoices, or null. */
export async function firstAttemptAfter(pg: PgPool, after: Date, clockId: string | null): Promise<Date | null> {
  const r = await pg.query<{ at: Date | null }>(
    `SELECT min(next_payment_attempt_at) AS at FROM invoices i
      WHERE status = 'open' AND next_payment_attempt_at > $1 AND ${inScope('i.account_id', '$2')}`,
    [after, clockId],
  );
  return r.rows[0]?.at ?? null;
}

/** Locks the account's invoice until the transaction ends; false when the account has no such invoice. */
export async function lockAccountInvoice(client: PgClient, invoiceId: string, accountId: string): Promise<boolean> {
  const locked = await client.query('SELECT 1 FROM invoices WHERE id = $1 AND account_id = $2 FOR UPDATE', [
    invoiceId,
    accountId,
  ]);
  return locked.rowCount !== 0;
}

/** The invoice (locked by the caller) with its open attempt, as it is now. */
export async function lockedInvoice(client: PgClient, invoiceId: string): Promise<LockedInvoice | undefined> {
  const r = await client.query<LockedInvoice>(`SELECT ${LOCK_COLUMNS} WHERE i.id = $1`, [invoiceId]);
  return r.rows[0];
}

/** The status and failure code of the invoice's attempt number `attempt`, if it was made. */
export async function attemptRecord(
  client: PgClient,
  invoiceId: string,
  attempt: number,
): Promise<{ status: string; failure_code: string | null } | undefined> {
  const r = await client.query<{ status: string; failure_code: string | null }>(
    'SELECT status, failure_code FROM payment_attempts WHERE invoice_id = $1 AND attempt = $2',
    [invoiceId, attempt],
  );
  return r.rows[0];
}

/** The invoice's latest attempt if it waits for the customer (requires_action) and has the processor's payment id. */
export async function latestAttemptRequiringAction(
  db: PgPool | PgClient,
  invoiceId: string,
): Promise<{ attempt: number; charge_id: string } | undefined> {
  const r = await db.query<{ attempt: number; charge_id: string }>(
    `SELECT pa.attempt, pa.charge_id FROM payment_attempts pa JOIN invoices i ON i.id = pa.invoice_id
      WHERE pa.invoice_id = $1 AND pa.status = 'requires_action' AND pa.attempt = i.attempt_count AND pa.charge_id IS NOT NULL`,
    [invoiceId],
  );
  return r.rows[0];
}

/** The accounts' default payment methods. */
export async function defaultPaymentMethods(
  client: PgClient,
  accountIds: string[],
): Promise<{ account_id: string; id: string; processor_token: string }[]> {
  const r = await client.query<{ account_id: string; id: string; processor_token: string }>(
    'SELECT account_id, id, processor_token FROM payment_methods WHERE account_id = ANY($1) AND is_default',
    [accountIds],
  );
  return r.rows;
}

/**
 * Records new attempts (`invoiceIds[i]`'s attempt `attempts[i]` with method `methodIds[i]` and key `keys[i]`):
 * `pending`, or at once `failed` with `no_payment_method` when the method is null; and numbers each invoice's
 * attempt_count.
 */
export async function insertAttempts(
  client: PgClient,
  invoiceIds: string[],
  attempts: number[],
  methodIds: (string | null)[],
  keys: string[],
  manual: boolean,
  now: Date,
): Promise<void> {
  await client.query(
    `INSERT INTO payment_attempts (invoice_id, attempt, payment_method_id, idempotency_key, status, failure_code, manual, created_at, completed_at)
       SELECT u.invoice_id, u.attempt, u.pm, u.key, CASE WHEN u.pm IS NULL THEN 'failed' ELSE 'pending' END,
              CASE WHEN u.pm IS NULL THEN 'no_payment_method' END, $5, $6, CASE WHEN u.pm IS NULL THEN $6::timestamptz END
         FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) AS u(invoice_id, attempt, pm, key)`,
    [invoiceIds, attempts, methodIds, keys, manual, now],
  );
  await client.query(
    'UPDATE invoices i SET attempt_count = u.attempt FROM unnest($1::text[], $2::int[]) AS u(id, attempt) WHERE i.id = u.id',
    [invoiceIds, attempts],
  );
}

/**
 * Closes the invoices' pending attempts as failed, `nothing_to_charge`, and marks the open or uncollectible ones paid;
 * returns the ids marked paid.
 */
export async function settleAsPaidWithoutCharge(client: PgClient, ids: string[], now: Date): Promise<string[]> {
  await client.query(
    `UPDATE payment_attempts SET status = 'failed', failure_code = 'nothing_to_charge', completed_at = $2
      WHERE invoice_id = ANY($1) AND status = 'pending'`,
    [ids, now],
  );
  const r = await client.query<{ id: string }>(
    `UPDATE invoices SET status = 'paid', paid_at = $2, next_payment_attempt_at = NULL, last_payment_error = NULL
      WHERE id = ANY($1) AND status IN ('open', 'uncollectible') RETURNING id`,
    [ids, now],
  );
  return r.rows.map((x) => x.id);
}

/** A pending attempt whose charge may have happened: `unknown` until reconciled (only while still pending). */
export async function markAttemptUnknown(pg: PgPool, invoiceId: string, attempt: number): Promise<void> {
  await pg.query(
    "UPDATE payment_attempts SET status = 'unknown' WHERE invoice_id = $1 AND attempt = $2 AND status = 'pending'",
    [invoiceId, attempt],
  );
}
