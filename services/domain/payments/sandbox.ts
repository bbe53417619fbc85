import { createHash, randomBytes } from 'node:crypto';
import { withTransaction, type PgPool } from '../../../shared/clients/postgres.js';
import {
  insertChargesOnce,
  insertRefund,
  lockSucceededCharge,
  refundByKey,
  type LedgerCharge,
  type LedgerRow,
} from './sandbox-store.js';
import type {
  CardToVerify,
  ChargeRequest,
  ChargeResult,
  PaymentProcessor,
  RefundFailureCode,
  RefundRequest,
  RefundResult,
  VerifyCardResult,
} from './processor.js';
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
 * Refunds likewise (table sandbox_refunds): one per idempotency key, never more in total than the charge.
 */
export const SANDBOX_DECLINED_CARD = '4000000000000002';
export const SANDBOX_INSUFFICIENT_FUNDS_CARD = '4000000000009995';

const TOKEN = /^sandbox_tok_(ok|insufficient_funds)_[A-Za-z0-9_-]+$/;
const DECIMAL = /^\d+(\.\d+)?$/;

export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';
  readonly acceptsRawCards = true;

  constructor(private readonly ledger: PgPool) {}

  async verifyCard(card: CardToVerify): Promise<VerifyCardResult> {
    if (card.number === SANDBOX_DECLINED_CARD) return { ok: false, code: 'card_declined' };
    const behaviour = card.number === SANDBOX_INSUFFICIENT_FUNDS_CARD ? 'insufficient_funds' : 'ok';
    return { ok: true, token: `sandbox_tok_${behaviour}_${randomBytes(12).toString('base64url')}` };
  }

  async charge(req: ChargeRequest): Promise<ChargeResult> {
    if (!DECIMAL.test(req.amount) || !/[1-9]/.test(req.amount))
      throw new RangeError(`charge amount must be a positive decimal string, got "${req.amount}"`);
    if (!/^[A-Z]{3}$/.test(req.currency))
      throw new RangeError(`charge currency must be an ISO 4217 code, got "${req.currency}"`);
    if (!req.idempotencyKey) throw new RangeError('charge needs an idempotency key');
    const m = TOKEN.exec(req.paymentMethod.processor_token);
    if (!m) return { status: 'failed', failure_code: 'processing_error' };
    // Derived from the idempotency key: a retried charge reports the same charge id, never a second one.
    const chargeId = `ch_sandbox_${createHash('sha256').update(req.idempotencyKey).digest('hex').slice(0, 24)}`;
    const outcome: ChargeResult =
      m[1] === 'insufficient_funds'
        ? { status: 'failed', failure_code: 'insufficient_funds' }
        : { status: 'succeeded', id: chargeId };
    const row = await this.record({
      key: req.idempotencyKey,
      chargeId,
      token: req.paymentMethod.processor_token,
      amount: req.amount,
      currency: req.currency,
      status: outcome.status,
      failureCode: outcome.status === 'failed' ? outcome.failure_code : null,
    });
    if (
      row.processor_token !== req.paymentMethod.processor_token ||
      row.currency !== req.currency ||
      !sameAmount(row.amount, req.amount)
    ) {
      throw new RangeError(`idempotency key ${req.idempotencyKey} was already used for another charge`);
    }
    return row.status === 'succeeded'
      ? { status: 'succeeded', id: row.charge_id }
      : { status: 'failed', failure_code: row.failure_code ?? 'processing_error' };
  }

  /**
   * Under the charge's row lock (refunds of one charge are serialised): the refund first recorded under the
   * key, or a new one if what is left of the charge covers it.
   */
  async refund(req: RefundRequest): Promise<RefundResult> {
    if (!DECIMAL.test(req.amount) || !/[1-9]/.test(req.amount))
      throw new RangeError(`refund amount must be a positive decimal string, got "${req.amount}"`);
    if (!req.idempotencyKey) throw new RangeError('refund needs an idempotency key');
    const refundId = `re_sandbox_${createHash('sha256').update(req.idempotencyKey).digest('hex').slice(0, 24)}`;
    const row = await withTransaction(this.ledger, async (client) => {
      const c = await lockSucceededCharge(client, req.chargeId);
      const first = await refundByKey(client, req.idempotencyKey);
      if (first) return first;
      const failure: RefundFailureCode | null =
        !c || c.currency !== req.currency
          ? 'charge_not_found'
          : new Decimal(c.refunded).plus(req.amount).gt(c.amount)
            ? 'amount_exceeds_charge'
            : null;
      return insertRefund(client, {
        key: req.idempotencyKey,
        refundId,
        chargeId: req.chargeId,
        amount: req.amount,
        currency: req.currency,
        status: failure ? 'failed' : 'succeeded',
        failureCode: failure,
      });
    });
    if (row.charge_id !== req.chargeId || row.currency !== req.currency || !sameAmount(row.amount, req.amount)) {
      throw new RangeError(`idempotency key ${req.idempotencyKey} was already used for another refund`);
    }
    return row.status === 'succeeded'
      ? { status: 'succeeded', id: row.refund_id }
      : { status: 'failed', failure_code: row.failure_code ?? 'processing_error' };
  }

  private queue: { charge: LedgerCharge; resolve: (row: LedgerRow) => void; reject: (err: unknown) => void }[] = [];

  /**
   * The ledger row for a key: the new charge, or the one first recorded under that key. Charges arriving in
   * the same turn of the event loop share one INSERT (a billing run charges thousands at once).
   */
  private record(charge: LedgerCharge): Promise<LedgerRow> {
    return new Promise((resolve, reject) => {
      if (this.queue.push({ charge, resolve, reject }) === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    const c = batch.map((b) => b.charge);
    try {
      const rows = await insertChargesOnce(this.ledger, c);
      const byKey = new Map(rows.map((row) => [row.idempotency_key, row]));
      for (const b of batch) {
        const row = byKey.get(b.charge.key);
        // A concurrent first use of the key committed after this statement's snapshot: ask again.
        if (row) b.resolve(row);
        else this.record(b.charge).then(b.resolve, b.reject);
      }
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}

const sameAmount = (a: string, b: string) => new Decimal(a).eq(new Decimal(b));
