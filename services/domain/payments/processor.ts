/**
 * The card processor meterline talks to. Card numbers reach it once, when a card is added
 * (verifyCard); afterwards only the opaque token it returned is kept and charged — the way Stripe's
 * PaymentMethod ids work. The sandbox is the one implementation here; a real one would call the
 * processor's API with the same shapes.
 */
export interface PaymentProcessor {
  /** Stored with each payment method so a charge goes back to the processor that tokenised the card. */
  readonly name: string;
  /** Checks the card with the processor; on success returns the token to charge it later. */
  verifyCard(card: CardToVerify): Promise<VerifyCardResult>;
  /**
   * Charges a stored payment method. The same idempotencyKey always denotes the same charge: a retry
   * after a crash reports the first outcome instead of charging twice.
   */
  charge(req: ChargeRequest): Promise<ChargeResult>;
  /**
   * Pays back part or all of a succeeded charge. Like charge(), the same idempotencyKey always denotes the
   * same refund: a retry after a crash reports the first outcome instead of refunding twice.
   */
  refund(req: RefundRequest): Promise<RefundResult>;
}

/** Only ever held in memory for the duration of one request; never stored or logged. */
export interface CardToVerify {
  /** Digits only. */
  number: string;
  exp_month: number;
  exp_year: number;
  cvc: string;
}

export type DeclineCode = 'card_declined';

export type VerifyCardResult = { ok: true; token: string } | { ok: false; code: DeclineCode };

/** What the processor needs of a stored payment method (a row of payment_methods). */
export interface ChargeablePaymentMethod {
  id: string;
  processor_token: string;
}

export interface ChargeRequest {
  paymentMethod: ChargeablePaymentMethod;
  /** Decimal string in the currency's major unit (`"12.30"`): money stays exact. */
  amount: string;
  /** ISO 4217, upper case. */
  currency: string;
  idempotencyKey: string;
}

export type ChargeFailureCode = 'insufficient_funds' | 'card_declined' | 'processing_error';

export type ChargeResult = { status: 'succeeded'; id: string } | { status: 'failed'; failure_code: ChargeFailureCode };

export interface RefundRequest {
  /** The charge paid back (a ChargeResult id). */
  chargeId: string;
  /** Decimal string in the currency's major unit; at most what is left of the charge. */
  amount: string;
  currency: string;
  idempotencyKey: string;
}

export type RefundFailureCode = 'charge_not_found' | 'amount_exceeds_charge' | 'processing_error';

export type RefundResult = { status: 'succeeded'; id: string } | { status: 'failed'; failure_code: RefundFailureCode };
