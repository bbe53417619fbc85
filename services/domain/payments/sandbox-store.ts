import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { ChargeFailureCode, RefundFailureCode } from './processor.js';

/**
 * The sandbox processor's own ledger (sandbox.ts): charges (sandbox_charges) and refunds (sandbox_refunds),
 * one row per idempotency key, as a real processor keeps them on its side.
 */

export interface LedgerCharge {
  key: string;
  chargeId: string;
  token: string;
  amount: string;
  currency: string;
  status: 'succeeded' | 'failed';
  failureCode: ChargeFailureCode | null;
}

export interface LedgerRow {
  charge_id: string;
  processor_token: string;
  amount: string;
  currency: string;
  status: 'succeeded' | 'failed';
  failure_code: ChargeFailureCode | null;
}

export interface RefundRow {
  refund_id: string;
  charge_id: string;
  amount: string;
  currency: string;
  status: 'succeeded' | 'failed';
  failure_code: RefundFailureCode | null;
}

export interface NewRefund {
  key: string;
  refundId: string;
  chargeId: string;
  amount: string;
  currency: string;
  status: 'succeeded' | 'failed';
  failureCode: RefundFailureCode | null;
}

/**
 * Records each charge under its idempotency key unless the key is taken; returns, per key, the row now on
 * record (the new charge or the first one). A key first used by a transaction not yet visible to this
 * statement's snapshot has no row: the caller asks again.
 */
export async function insertChargesOnce(
  pg: PgPool,
  c: LedgerCharge[],
): Promise<(LedgerRow & { idempotency_key: string })[]> {
  const r = await pg.query<LedgerRow & { idempotency_key: string }>(
    `WITH ins AS (
       INSERT INTO sandbox_charges (idempotency_key, charge_id, processor_token, amount, currency, status, failure_code)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::text[], $7::text[])
       ON CONFLICT (idempotency_key) DO NOTHING
       RETURNING idempotency_key, charge_id, processor_token, amount::text AS amount, currency, status, failure_code)
     SELECT * FROM ins
     UNION ALL
     SELECT idempotency_key, charge_id, processor_token, amount::text, currency, status, failure_code FROM sandbox_charges
      WHERE idempotency_key = ANY($1) AND idempotency_key NOT IN (SELECT idempotency_key FROM ins)`,
    [
      c.map((x) => x.key),
      c.map((x) => x.chargeId),
      c.map((x) => x.token),
      c.map((x) => x.amount),
      c.map((x) => x.currency),
      c.map((x) => x.status),
      c.map((x) => x.failureCode),
    ],
  );
  return r.rows;
}

/** A succeeded charge with what was refunded of it so far, locked for the caller's transaction (refunds of one charge are serialised). */
export async function lockSucceededCharge(
  client: PgClient,
  chargeId: string,
): Promise<{ amount: string; currency: string; refunded: string } | undefined> {
  const charge = await client.query<{ amount: string; currency: string; refunded: string }>(
    `SELECT c.amount::text AS amount, c.currency,
            (SELECT COALESCE(sum(r.amount), 0)::text FROM sandbox_refunds r WHERE r.charge_id = c.charge_id AND r.status = 'succeeded') AS refunded
       FROM sandbox_charges c WHERE c.charge_id = $1 AND c.status = 'succeeded' FOR UPDATE OF c`,
    [chargeId],
  );
  return charge.rows[0];
}

/** The refund first recorded under an idempotency key, if any. */
export async function refundByKey(client: PgClient, key: string): Promise<RefundRow | undefined> {
  const first = await client.query<RefundRow>(
    'SELECT refund_id, charge_id, amount::text AS amount, currency, status, failure_code FROM sandbox_refunds WHERE idempotency_key = $1',
    [key],
  );
  return first.rows[0];
}

export async function insertRefund(client: PgClient, r: NewRefund): Promise<RefundRow> {
  const q = await client.query<RefundRow>(
    `INSERT INTO sandbox_refunds (idempotency_key, refund_id, charge_id, amount, currency, status, failure_code) VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING refund_id, charge_id, amount::text AS amount, currency, status, failure_code`,
    [r.key, r.refundId, r.chargeId, r.amount, r.currency, r.status, r.failureCode],
  );
  return q.rows[0]!;
}
