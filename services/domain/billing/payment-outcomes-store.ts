import type { PgClient } from '../../../shared/clients/postgres.js';
import type { LockedInvoice } from './attempts-store.js';

/**
 * What payment outcomes write, the SQL (the rules are payment-outcomes.ts and stripe-events.ts): an attempt's guarded
 * completion, its invoice's status and next attempt, and a dispute. Each runs in the caller's transaction.
 */

/**
 * Completes the attempts still open to the transition (`invoiceIds[i]`'s attempt `attempts[i]` to `statuses[i]`);
 * returns those this call completed — a transition already made is never made again.
 */
export async function completeOpenAttempts(
  client: PgClient,
  invoiceIds: string[],
  attempts: number[],
  statuses: string[],
  failureCodes: (string | null)[],
  now: Date,
  chargeIds: (string | null)[],
): Promise<{ invoice_id: string; attempt: number }[]> {
  const r = await client.query<{ invoice_id: string; attempt: number }>(
    `UPDATE payment_attempts pa SET status = u.status, failure_code = u.failure_code, charge_id = u.charge_id, completed_at = $5
       FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $6::text[]) AS u(invoice_id, attempt, status, failure_code, charge_id)
      WHERE pa.invoice_id = u.invoice_id AND pa.attempt = u.attempt
        AND (pa.status IN ('pending', 'unknown') OR (pa.status = 'requires_action' AND u.status <> 'requires_action')
             OR (pa.status = 'failed' AND u.status = 'succeeded'))
      RETURNING pa.invoice_id, pa.attempt`,
    [invoiceIds, attempts, statuses, failureCodes, now, chargeIds],
  );
  return r.rows;
}

/** Open invoices waiting for the customer: their next automatic attempt and last error (the status stays). */
export async function planNextAttempts(
  client: PgClient,
  ids: string[],
  next: (Date | null)[],
  errors: string[],
): Promise<void> {
  await client.query(
    `UPDATE invoices i SET next_payment_attempt_at = u.next, last_payment_error = u.error
         FROM unnest($1::text[], $2::timestamptz[], $3::jsonb[]) AS u(id, next, error)
        WHERE i.id = u.id AND i.status = 'open'`,
    [ids, next, errors],
  );
}

/** The open or uncollectible invoices (`ids[i]` paid at `paidAt[i]`). */
export async function markInvoicesPaid(client: PgClient, ids: string[], paidAt: Date[]): Promise<void> {
  await client.query(
    `UPDATE invoices i SET status = 'paid', paid_at = u.at, next_payment_attempt_at = NULL, last_payment_error = NULL
       FROM unnest($1::text[], $2::timestamptz[]) AS u(id, at)
      WHERE i.id = u.id AND i.status IN ('open', 'uncollectible')`,
    [ids, paidAt],
  );
}

/** Open invoices after a failed automatic attempt: their next attempt and last error, uncollectible when none is next. */
export async function scheduleAfterFailure(
  client: PgClient,
  ids: string[],
  next: (Date | null)[],
  errors: string[],
): Promise<void> {
  await client.query(
    `UPDATE invoices i SET next_payment_attempt_at = u.next, last_payment_error = u.error,
              status = CASE WHEN u.next IS NULL THEN 'uncollectible' ELSE i.status END
         FROM unnest($1::text[], $2::timestamptz[], $3::jsonb[]) AS u(id, next, error)
        WHERE i.id = u.id AND i.status = 'open'`,
    [ids, next, errors],
  );
}

/** An attempt named by invoice and number, with its invoice (as a payment locks it) and its payment method. */
export type AttemptWithInvoice = LockedInvoice & {
  attempt: number;
  manual: boolean;
  /** When the attempt was numbered (its billing run's time, a test clock's on a clock). */
  made_at: Date;
  pm_id: string | null;
  pm_token: string | null;
};

/** The attempts (`invoiceIds[i]`'s number `attempts[i]`) that exist, each with its invoice; nothing locked. */
export async function attemptsWithInvoices(
  client: PgClient,
  invoiceIds: string[],
  attempts: number[],
): Promise<AttemptWithInvoice[]> {
  const r = await client.query<AttemptWithInvoice>(
    `SELECT i.id, i.account_id, i.amount::text AS amount, (i.amount - i.amount_credited)::text AS amount_due, i.currency, i.status,
            i.attempt_count, i.created_at, COALESCE(i.due_at, i.created_at) AS due_at, pa.attempt, pa.manual,
            pa.created_at AS made_at, pm.id AS pm_id, pm.processor_token AS pm_token
       FROM payment_attempts pa JOIN invoices i ON i.id = pa.invoice_id
       LEFT JOIN payment_methods pm ON pm.id = pa.payment_method_id
      WHERE (pa.invoice_id, pa.attempt) IN (SELECT * FROM unnest($1::text[], $2::int[]))`,
    [invoiceIds, attempts],
  );
  return r.rows;
}

/**
 * Sets the dispute status of the invoice paid by the PaymentIntent `paymentIntentId`: a dispute's creation only on an
 * invoice without one (it never overwrites a close), its close always. Returns the invoice, or undefined for none.
 */
export async function setDisputeStatus(
  client: PgClient,
  paymentIntentId: string,
  status: string,
  closed: boolean,
): Promise<{ id: string; account_id: string; amount: string; currency: string } | undefined> {
  const r = await client.query<{ id: string; account_id: string; amount: string; currency: string }>(
    `UPDATE invoices i SET dispute_status = $2
       FROM payment_attempts pa
      WHERE pa.charge_id = $1 AND pa.status = 'succeeded' AND i.id = pa.invoice_id
        AND ($3 OR i.dispute_status IS NULL)
      RETURNING i.id, i.account_id, i.amount::text AS amount, i.currency`,
    [paymentIntentId, status, closed],
  );
  return r.rows[0];
}
