import type { PgPool } from '../../../shared/clients/postgres.js';
import { emailKindOf, type EmailKind } from './triggers.js';

/**
 * invoice_emails (630_invoice_emails.sql): one row per email, keyed by (event, recipient). The event fan-out
 * records rows before it acks the event; the dispatcher's mail delivery claims due rows under a lease (FOR UPDATE
 * SKIP LOCKED: two dispatchers never hold the same row), sends, and marks each row sent right after the SMTP server
 * accepted it.
 */

/** An event as the fan-out reads it from the EVENTS stream. */
export interface EmailEvent {
  id: string;
  type: string;
  account_id: string;
  data: Record<string, unknown>;
}

/**
 * Rows for the events that send an email (EMAIL_TRIGGERS), to the account's billing email as it is now; an account
 * without one gets no row (nothing waits for an address). A customer on a test clock gets its emails marked `test`
 * (its months are simulated: docs/test-clocks.md). A redelivered event adds none. Returns rows added.
 */
export async function recordEmails(pg: PgPool, events: EmailEvent[], due: Date): Promise<number> {
  const rows = events.flatMap((e) => {
    const kind = emailKindOf(e.type);
    const invoiceId = e.data.invoice_id;
    if (!kind || typeof invoiceId !== 'string') return [];
    const noteId = kind === 'credit_note' && typeof e.data.credit_note_id === 'string' ? e.data.credit_note_id : null;
    if (kind === 'credit_note' && !noteId) return [];
    return [{ e, kind, invoiceId, noteId }];
  });
  if (rows.length === 0) return 0;
  const r = await pg.query(
    `INSERT INTO invoice_emails (event_id, event_type, account_id, kind, invoice_id, credit_note_id, recipient, next_attempt_at, test)
     SELECT x.e, x.t, x.a, x.k, x.i, x.c, acc.email, $7, acc.test_clock_id IS NOT NULL
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS x(e, t, a, k, i, c)
       JOIN accounts acc ON acc.id = x.a
      WHERE acc.email IS NOT NULL AND acc.email <> ''
     ON CONFLICT (event_id, recipient) DO NOTHING`,
    [
      rows.map((x) => x.e.id),
      rows.map((x) => x.e.type),
      rows.map((x) => x.e.account_id),
      rows.map((x) => x.kind),
      rows.map((x) => x.invoiceId),
      rows.map((x) => x.noteId),
      due,
    ],
  );
  return r.rowCount ?? 0;
}

/** A claimed email: what composing and sending it needs. */
export interface ClaimedEmail {
  id: string;
  event_id: string;
  account_id: string;
  kind: EmailKind;
  invoice_id: string;
  credit_note_id: string | null;
  recipient: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The customer was on a test clock when the event happened: the email says it is a test. */
  test: boolean;
}

/** Due pending rows (next_attempt_at ≤ now, the injectable clock), leased to the caller for leaseMs of real time. */
export async function claimDueEmails(pg: PgPool, now: Date, limit: number, leaseMs: number): Promise<ClaimedEmail[]> {
  const r = await pg.query<ClaimedEmail>(
    `WITH due AS (
       SELECT id FROM invoice_emails
        WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= now())
        ORDER BY next_attempt_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
     )
     UPDATE invoice_emails m SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
       FROM due WHERE m.id = due.id
     RETURNING m.id::text AS id, m.event_id, m.account_id, m.kind, m.invoice_id, m.credit_note_id, m.recipient, m.attempts, m.test`,
    [now, limit, leaseMs],
  );
  return r.rows;
}

/**
 * The SMTP server accepted the email: the row is sent and, for the invoice's own email, the invoice shows when
 * (emailed_at) — one statement, so both or neither. Only a pending row changes (a second marker finds it sent).
 */
export async function markEmailSent(pg: PgPool, id: string): Promise<void> {
  await pg.query(
    `WITH sent AS (
       UPDATE invoice_emails SET status = 'sent', sent_at = now(), attempts = attempts + 1, next_attempt_at = NULL,
              lease_until = NULL, last_error = NULL
        WHERE id = $1 AND status = 'pending' RETURNING kind, invoice_id, sent_at
     )
     UPDATE invoices i SET emailed_at = sent.sent_at FROM sent
      WHERE i.id = sent.invoice_id AND sent.kind = 'invoice' AND i.emailed_at IS NULL`,
    [id],
  );
}

/** A failed attempt: the next one is due at retryAt, or none is left (null) and the row is `failed`. */
export async function recordEmailFailure(pg: PgPool, id: string, error: string, retryAt: Date | null): Promise<void> {
  await pg.query(
    `UPDATE invoice_emails SET attempts = attempts + 1, last_error = $2, lease_until = NULL, next_attempt_at = $3,
            status = CASE WHEN $3::timestamptz IS NULL THEN 'failed' ELSE 'pending' END
      WHERE id = $1 AND status = 'pending'`,
    [id, error.slice(0, 1000), retryAt],
  );
}
