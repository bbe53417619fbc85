/**
 * The card processor meterline talks to. Card numbers reach it once, when a card is added
 * (verifyCard); afterwards only the opaque token it returned is kept and charged — the way Stripe's
 * PaymentMethod ids work. Two implementations: the sandbox (sandbox.ts) and Stripe (stripe.ts), chosen per
 * deployment (create.ts, docs/payments.md).
 */
export interface PaymentProcessor {
  /** Stored with each payment method so a charge goes back to the processor that tokenised the card. */
  readonly name: string;
  /**
   * Whether raw card numbers may reach it (verifyCard; absent = yes). Stripe: no — cards are entered in Stripe's own card
   * element and arrive as a PaymentMethod id (savePaymentMethod), which keeps meterline out of PCI DSS scope.
   */
  readonly acceptsRawCards?: boolean;
  /**
   * Turns raw card details into the processor's token, which is then saved with savePaymentMethod (Stripe with
   * STRIPE_FORWARD_RAW_CARDS: a PaymentMethod made from the number). Absent: verifyCard is how raw cards are taken.
   */
  tokenizeCard?(card: CardToVerify): Promise<TokenizeCardResult>;
  /** Checks the card with the processor; on success returns the token to charge it later. */
  verifyCard(card: CardToVerify): Promise<VerifyCardResult>;
  /**
   * Saves for the account a card the processor already tokenised (a Stripe PaymentMethod id `pm_…`), set up for
   * off-session charges; returns what the processor reports of the card. Absent: the processor takes raw cards only.
   */
  savePaymentMethod?(accountId: string, token: string): Promise<SavePaymentMethodResult>;
  /**
   * The processor's own record of a charge whose answer never came (ChargeOutcomeUnknownError): its outcome, or
   * null when the processor never made it (then charging again with the same key is safe).
   */
  findCharge?(req: ChargeRequest): Promise<ChargeResult | null>;
  /**
   * For card entry in the customer's browser (the hosted pages, docs/payments.md "Hosted pages"): a SetupIntent for
   * the account's Customer whose client secret the processor's own script (Stripe.js) confirms with the card the
   * customer types into its card element — the number goes from the browser to the processor, never to meterline.
   */
  createSetupIntent?(accountId: string): Promise<{ clientSecret: string }>;
  /**
   * A payment waiting for the customer (requires_action: 3-D Secure) as the browser needs it: its client secret for
   * Stripe.js to run the challenge, and the processor's current outcome of it (null while it has none).
   */
  paymentInBrowser?(
    paymentId: string,
  ): Promise<{ clientSecret: string; paymentMethod: string | null; outcome: ChargeResult | null }>;
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

export type TokenizeCardResult = { ok: true; token: string } | { ok: false; code: string; message: string };

export type SavePaymentMethodResult =
  | {
      ok: true;
      token: string;
      brand: string;
      last4: string;
      exp_month: number;
      exp_year: number;
      /** The processor's fingerprint of the card number (the same card gives the same one). */
      fingerprint: string | null;
    }
  | { ok: false; code: string; message: string; status: 402 | 404 };

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
  /** Whose card it is (Stripe charges a card through its Customer) and what is paid, recorded with the charge. */
  accountId?: string;
  invoiceId?: string;
  attempt?: number;
}

export type ChargeFailureCode =
  | 'insufficient_funds'
  | 'card_declined'
  | 'expired_card'
  | 'authentication_required'
  | 'processing_error';

export type ChargeResult =
  | { status: 'succeeded'; id: string }
  | {
      status: 'failed';
      failure_code: ChargeFailureCode;
      /** The issuer's reason as the processor reports it (Stripe's `decline_code`), when it gives one. */
      decline_code?: string;
    }
  /** The bank asks the customer to authenticate (3-D Secure); `id` is the processor's payment (a PaymentIntent). */
  | { status: 'requires_action'; id: string };

/**
 * The processor was called but its answer never came (a timeout, a lost response, a 5xx): the charge may or may not
 * have been made. The attempt is `unknown` until settled from the processor's record, never charged under a new key.
 */
export class ChargeOutcomeUnknownError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChargeOutcomeUnknownError';
  }
}

export interface RefundRequest {
  /** The charge paid back (a ChargeResult id). */
  chargeId: string;
  /** Decimal string in the currency's major unit; at most what is left of the charge. */
  amount: string;
  currency: string;
  idempotencyKey: string;
}

/** charge_disputed: the customer disputed the charge (a chargeback), so the processor refunds nothing more. */
export type RefundFailureCode = 'charge_not_found' | 'amount_exceeds_charge' | 'charge_disputed' | 'processing_error';

export type RefundResult = { status: 'succeeded'; id: string } | { status: 'failed'; failure_code: RefundFailureCode };
