import { createHash, randomBytes } from 'node:crypto';
import type { PgPool } from '../../../shared/clients/postgres.js';
import type { CardToVerify, ChargeFailureCode, ChargeRequest, ChargeResult, PaymentProcessor, VerifyCardResult } from './processor.js';
import { Decimal } from '../../../shared/money/decimal.js';

/**
 * Test cards, as Stripe's:
 *   4000000000000002 → declined when added (card_declined);
 *   4000000000009995 → added, but every charge fails with insufficient_funds;
 *   any other valid number → charges succeed.
 *
 * meterline never stores the number, so the charge outcome can't be looked up from it later. Like a real
 * processor, the sandbox records its decision in the token it hands back when the card is added:
 * `sandbox_tok_<behaviour>_<random>`. The token is opaque to the rest of meterline (it is only passed
 * back to charge()); only the sandbox reads the behaviour out of it.
 *
 * Like a real processor, the sandbox keeps its own ledger of charges (table sandbox_charges, one row per
 * idempotency key): a charge retried with the same key — after a crash, or by two billing processes at
 * once — reports the first outcome and is never made twice, across processes. The same key with another
 * amount, currency or card is refused, as Stripe refuses a reused idempotency key with other parameters.
 */
export const SANDBOX_DECLINED_CARD = '4000000000000002';
export const SANDBOX_INSUFFICIENT_FUNDS_CARD = '4000000000009995';

const TOKEN = /^sandbox_tok_(ok|insufficient_funds)_[A-Za-z0-9_-]+$/;
const DECIMAL = /^\d+(\.\d+)?$/;

export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

  constructor(private readonly ledger: PgPool) {}

  async verifyCard(card: CardToVerify): Promise<VerifyCardResult> {
    if (card.number === SANDBOX_DECLINED_CARD) return { ok: false, code: 'card_declined' };
    const behaviour = card.number === SANDBOX_INSUFFICIENT_FUNDS_CARD ? 'insufficient_funds' : 'ok';
    return { ok: true, token: `sandbox_tok_${behaviour}_${randomBytes(12).toString('base64url')}` };
  }

  async charge(req: ChargeRequest): Promise<ChargeResult> {
    if (!DECIMAL.test(req.amount) || !/[1-9]/.test(req.amount)) throw new RangeError(`charge amount must be a positive decimal string, got "${req.amount}"`);
    if (!/^[A-Z]{3}$/.test(req.currency)) throw new RangeError(`charge currency must be an ISO 4217 code, got "${req.currency}"`);
    if (!req.idempotencyKey) throw new RangeError('charge needs an idempotency key');
    const m = TOKEN.exec(req.paymentMethod.processor_token);
    if (!m) return { status: 'failed', failure_code: 'processing_error' };
    // Derived from the idempotency key: a retried charge reports the same charge id, never a second one.
    const chargeId = `ch_sandbox_${createHash('sha256').update(req.idempotencyKey).digest('hex').slice(0, 24)}`;
    const outcome: ChargeResult = m[1] === 'insufficient_funds' ? { status: 'failed', failure_code: 'insufficient_funds' } : { status: 'succeeded', id: chargeId };
    const r = await this.ledger.query<{ charge_id: string; processor_token: string; amount: string; currency: string; status: 'succeeded' | 'failed'; failure_code: ChargeFailureCode | null; inserted: boolean }>(
      `WITH ins AS (
         INSERT INTO sandbox_charges (idempotency_key, charge_id, processor_token, amount, currency, status, failure_code)
         VALUES ($1, $2, $3, $4::numeric, $5, $6, $7) ON CONFLICT (idempotency_key) DO NOTHING
         RETURNING charge_id, processor_token, amount::text AS amount, currency, status, failure_code, true AS inserted)
       SELECT * FROM ins
       UNION ALL
       SELECT charge_id, processor_token, amount::text, currency, status, failure_code, false FROM sandbox_charges
        WHERE idempotency_key = $1 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [req.idempotencyKey, chargeId, req.paymentMethod.processor_token, req.amount, req.currency, outcome.status, outcome.status === 'failed' ? outcome.failure_code : null],
    );
    const row = r.rows[0];
    // A concurrent first use of the key commits between our INSERT and SELECT: ask again.
    if (!row) return this.charge(req);
    if (!row.inserted && (row.processor_token !== req.paymentMethod.processor_token || row.currency !== req.currency || !sameAmount(row.amount, req.amount))) {
      throw new RangeError(`idempotency key ${req.idempotencyKey} was already used for another charge`);
    }
    return row.status === 'succeeded' ? { status: 'succeeded', id: row.charge_id } : { status: 'failed', failure_code: row.failure_code ?? 'processing_error' };
  }
}

const sameAmount = (a: string, b: string) => new Decimal(a).eq(new Decimal(b));
