import { createHash, randomBytes } from 'node:crypto';
import type { CardToVerify, ChargeRequest, ChargeResult, PaymentProcessor, VerifyCardResult } from './processor.js';

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
 */
export const SANDBOX_DECLINED_CARD = '4000000000000002';
export const SANDBOX_INSUFFICIENT_FUNDS_CARD = '4000000000009995';

const TOKEN = /^sandbox_tok_(ok|insufficient_funds)_[A-Za-z0-9_-]+$/;
const DECIMAL = /^\d+(\.\d+)?$/;

export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

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
    if (m[1] === 'insufficient_funds') return { status: 'failed', failure_code: 'insufficient_funds' };
    // Derived from the idempotency key: a retried charge reports the same charge id, never a second one.
    return { status: 'succeeded', id: `ch_sandbox_${createHash('sha256').update(req.idempotencyKey).digest('hex').slice(0, 24)}` };
  }
}
