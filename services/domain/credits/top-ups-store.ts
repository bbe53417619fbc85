import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { NewEvent } from '../events/outbox-store.js';
import { creditGranted, topUpFailed, type FailedTopUpFacts } from './events.js';
import type { TopUpRow, TopUpTrigger } from './types.js';
import { recordAutoRechargeFailures } from './wallet-store.js';

/**
 * Top-ups as stored (migration 830): the row written with its invoice, and the two outcomes the payment step applies
 * in the transaction that settles the invoice's attempt (services/domain/billing/payment-outcomes.ts) — paid: the
 * grant, once (UNIQUE credit_grants.source_invoice_id); failed: the top-up failed, its invoice uncollectible.
 */

type Queryable = Pick<PgPool, 'query'> | PgClient;

const TOP_UP_COLUMNS = `t.id, t.account_id, a.customer_id, t.invoice_id, t.currency, t.amount::text AS amount, t.status,
  t.failure_code, t.trigger, g.id AS grant_id, t.created_at, t.completed_at`;
const TOP_UP_FROM = `credit_top_ups t JOIN accounts a ON a.id = t.account_id
  LEFT JOIN credit_grants g ON g.source_invoice_id = t.invoice_id`;

const notFound = (id: string) => new NotFoundError(`No credit top-up ${id}.`);

export async function insertTopUp(
  client: PgClient,
  t: {
    id: string;
    accountId: string;
    invoiceId: string;
    currency: string;
    amount: string;
    trigger: TopUpTrigger;
    idempotencyKey: string | null;
  },
  now: Date,
): Promise<void> {
  await client.query(
    `INSERT INTO credit_top_ups (id, account_id, invoice_id, currency, amount, trigger, idempotency_key, created_at)
     VALUES ($1, $2, $3, $4, $5::numeric, $6, $7, $8)`,
    [t.id, t.accountId, t.invoiceId, t.currency, t.amount, t.trigger, t.idempotencyKey, now],
  );
}

/** One of the account's top-ups; another account's is "not found" like an unknown id. */
export async function getTopUp(q: Queryable, accountId: string, id: string): Promise<TopUpRow> {
  if (!hasPrefix(id, 'ctu')) throw notFound(id);
  const r = await q.query<TopUpRow>(
    `SELECT ${TOP_UP_COLUMNS} FROM ${TOP_UP_FROM} WHERE t.id = $1 AND t.account_id = $2`,
    [id, accountId],
  );
  if (!r.rows[0]) throw notFound(id);
  return r.rows[0];
}

/** The account's top-up made under an idempotency key, or null. */
export async function topUpByKey(q: Queryable, accountId: string, key: string): Promise<TopUpRow | null> {
  const r = await q.query<TopUpRow>(
    `SELECT ${TOP_UP_COLUMNS} FROM ${TOP_UP_FROM} WHERE t.account_id = $1 AND t.idempotency_key = $2`,
    [accountId, key],
  );
  return r.rows[0] ?? null;
}

/** The account's customer id, or null for an unknown account. */
export async function customerOfAccount(q: Queryable, accountId: string): Promise<string | null> {
  const r = await q.query<{ customer_id: string | null }>('SELECT customer_id FROM accounts WHERE id = $1', [
    accountId,
  ]);
  return r.rows[0]?.customer_id ?? null;
}

/** Whether the account has a default payment method (a top-up is charged to it). */
export async function hasDefaultPaymentMethod(q: Queryable, accountId: string): Promise<boolean> {
  const r = await q.query('SELECT 1 FROM payment_methods WHERE account_id = $1 AND is_default', [accountId]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * THE grant of paid top-ups, in the transaction that marked their invoices paid (or a later sweep that finds a paid
 * top-up invoice without its grant): one grant per invoice, whatever calls it how often — the insert skips an
 * invoice that already has its grant. Returns the `credit.granted` events of the grants made now.
 */
export async function grantPaidTopUps(client: PgClient, invoiceIds: string[], now: Date): Promise<NewEvent[]> {
  if (invoiceIds.length === 0) return [];
  const due = await client.query<{
    id: string;
    account_id: string;
    invoice_id: string;
    currency: string;
    amount: string;
  }>(
    `SELECT t.id, t.account_id, t.invoice_id, t.currency, t.amount::text AS amount
       FROM credit_top_ups t JOIN invoices i ON i.id = t.invoice_id
      WHERE t.invoice_id = ANY($1) AND i.status = 'paid' AND t.status <> 'paid'
      ORDER BY t.id FOR UPDATE OF t`,
    [invoiceIds],
  );
  if (due.rows.length === 0) return [];
  const granted = await client.query<{
    id: string;
    account_id: string;
    amount: string;
    currency: string;
    source_invoice_id: string;
  }>(
    `INSERT INTO credit_grants (id, account_id, currency, amount, remaining, description, source_invoice_id, created_at)
     SELECT u.id, u.account_id, u.currency, u.amount, u.amount, 'Prepaid credit bought: top-up ' || u.top_up_id, u.invoice_id, $7
       FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::text[])
            AS u(id, account_id, currency, amount, invoice_id, top_up_id)
     ON CONFLICT (source_invoice_id) DO NOTHING
     RETURNING id, account_id, amount::text AS amount, currency, source_invoice_id`,
    [
      due.rows.map(() => newId('cred')),
      due.rows.map((t) => t.account_id),
      due.rows.map((t) => t.currency),
      due.rows.map((t) => t.amount),
      due.rows.map((t) => t.invoice_id),
      due.rows.map((t) => t.id),
      now,
    ],
  );
  await client.query(
    `UPDATE credit_top_ups SET status = 'paid', failure_code = NULL, completed_at = $2 WHERE id = ANY($1)`,
    [due.rows.map((t) => t.id), now],
  );
  // Credit bought: an auto-recharge stopped by a failure may buy again.
  await client.query(
    'UPDATE credit_wallet_settings SET last_failure_code = NULL, last_failure_at = NULL WHERE account_id = ANY($1) AND last_failure_at IS NOT NULL',
    [due.rows.map((t) => t.account_id)],
  );
  const topUpOf = new Map(due.rows.map((t) => [t.invoice_id, t.id]));
  return granted.rows.map((g) =>
    creditGranted({ ...g, expires_at: null }, 'top_up', {
      invoiceId: g.source_invoice_id,
      topUpId: topUpOf.get(g.source_invoice_id),
    }),
  );
}

/**
 * Top-ups whose charge failed: the top-up `failed` (once: only a pending one), its invoice uncollectible — no
 * automatic retry buys credit later without the customer asking; paying that invoice afterwards (its hosted page,
 * POST …/pay) still grants the credit. Returns the `credit.top_up.failed` events.
 */
export async function failTopUps(
  client: PgClient,
  failed: { invoiceId: string; failureCode: string }[],
  now: Date,
): Promise<NewEvent[]> {
  if (failed.length === 0) return [];
  const r = await client.query<FailedTopUpFacts>(
    `UPDATE credit_top_ups t SET status = 'failed', failure_code = u.code, completed_at = $3
       FROM unnest($1::text[], $2::text[]) AS u(invoice_id, code)
      WHERE t.invoice_id = u.invoice_id AND t.status = 'pending'
      RETURNING t.id, t.account_id, t.invoice_id, t.amount::text AS amount, t.currency, t.failure_code, t.trigger`,
    [failed.map((f) => f.invoiceId), failed.map((f) => f.failureCode), now],
  );
  if (r.rows.length === 0) return [];
  await client.query(
    `UPDATE invoices SET status = 'uncollectible', next_payment_attempt_at = NULL WHERE id = ANY($1) AND status = 'open'`,
    [r.rows.map((t) => t.invoice_id)],
  );
  await recordAutoRechargeFailures(
    client,
    r.rows.filter((t) => t.trigger === 'auto_recharge').map((t) => ({ accountId: t.account_id, code: t.failure_code })),
    now,
  );
  return r.rows.map(topUpFailed);
}

/** Paid top-up invoices still without their grant (none, but for a grant step that never ran): for the sweep. */
export async function paidTopUpsWithoutGrant(q: Queryable, limit: number): Promise<string[]> {
  const r = await q.query<{ invoice_id: string }>(
    `SELECT t.invoice_id FROM credit_top_ups t JOIN invoices i ON i.id = t.invoice_id
      WHERE t.status <> 'paid' AND i.status = 'paid' ORDER BY t.id LIMIT $1`,
    [limit],
  );
  return r.rows.map((x) => x.invoice_id);
}

/** A top-up's currency when the request names none: the customer's newest subscription's; none → 422 on currency. */
export async function defaultTopUpCurrency(q: Queryable, accountId: string): Promise<string> {
  const r = await q.query<{ currency: string }>(
    'SELECT currency FROM subscriptions WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
    [accountId],
  );
  if (!r.rows[0])
    throw new ValidationError([
      { field: 'currency', message: 'required: the customer has no subscription to take it from' },
    ]);
  return r.rows[0].currency;
}
