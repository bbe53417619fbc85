import Stripe from 'stripe';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import {
  ChargeOutcomeUnknownError,
  type CardToVerify,
  type ChargeFailureCode,
  type ChargeRequest,
  type ChargeResult,
  type PaymentProcessor,
  type RefundRequest,
  type RefundResult,
  type SavePaymentMethodResult,
  type TokenizeCardResult,
  type VerifyCardResult,
} from './processor.js';
import { recordStripeCustomer, stripeCustomerOf } from './stripe-store.js';

/**
 * Stripe as the payment processor (docs/payments.md), every call through the official `stripe` SDK:
 * - one Stripe Customer per account, made when first needed with idempotency key `meterline-customer:<account>`
 *   (a retry never makes two) and kept in stripe_customers;
 * - cards arrive as PaymentMethod ids from Stripe's card element (never raw numbers) and are saved with a confirmed
 *   off-session SetupIntent, so later charges need no customer present;
 * - each payment attempt is one off-session PaymentIntent whose idempotency key is the attempt's key: a retry after a
 *   crash or a lost answer is Stripe's first answer, never a second charge. The invoice and attempt are in its
 *   metadata, which is how a lost answer is found again (findCharge) and how webhooks find the invoice;
 * - refunds are Refunds of the PaymentIntent, keyed by the credit note.
 */
export interface StripeSettings {
  secretKey: string;
  /** Empty: api.stripe.com. */
  apiBase: string;
  timeoutMs: number;
  maxNetworkRetries: number;
}

export function stripeClient(s: StripeSettings): Stripe {
  const base = s.apiBase ? new URL(s.apiBase) : null;
  return new Stripe(s.secretKey, {
    timeout: s.timeoutMs,
    maxNetworkRetries: s.maxNetworkRetries,
    appInfo: { name: 'meterline' },
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'http:' ? 'http' : 'https',
        }
      : {}),
  });
}

/** The attempt's key in a PaymentIntent's metadata: what findCharge searches by. */
export const ATTEMPT_KEY = 'meterline_attempt';

const KNOWN_FAILURES: readonly string[] = ['insufficient_funds', 'expired_card', 'authentication_required'];

/** Stripe's `code` / `decline_code` → meterline's failure code (docs/payments.md); the decline_code is kept beside it. */
function failureOf(code: string | undefined, declineCode: string | undefined): ChargeFailureCode {
  if (declineCode && KNOWN_FAILURES.includes(declineCode)) return declineCode as ChargeFailureCode;
  if (code && KNOWN_FAILURES.includes(code)) return code as ChargeFailureCode;
  return code === 'processing_error' ? 'processing_error' : 'card_declined';
}

/** "12.30" EUR → 1230: Stripe amounts are integers in the currency's minor unit. */
export function toMinor(amount: string, currency: string): number {
  const minor = new Decimal(amount).times(new Decimal(10).pow(minorUnits(currency)));
  if (!minor.isInteger()) throw new RangeError(`${amount} ${currency} is not a whole number of minor units`);
  return minor.toNumber();
}

/** The attempt's outcome from Stripe's record of its PaymentIntent; null while Stripe itself has no outcome yet. */
export function outcomeOfIntent(pi: Stripe.PaymentIntent): ChargeResult | null {
  switch (pi.status) {
    case 'succeeded':
      return { status: 'succeeded', id: pi.id };
    case 'requires_action':
      return { status: 'requires_action', id: pi.id };
    case 'requires_payment_method':
    case 'canceled': {
      const e = pi.last_payment_error;
      if (!e && pi.status === 'requires_payment_method') return null;
      return {
        status: 'failed',
        failure_code: failureOf(e?.code, e?.decline_code),
        ...(e?.decline_code ? { decline_code: e.decline_code } : {}),
      };
    }
    default:
      return null;
  }
}

const isUnknownOutcome = (e: unknown) =>
  e instanceof Stripe.errors.StripeConnectionError ||
  e instanceof Stripe.errors.StripeAPIError ||
  e instanceof Stripe.errors.StripeRateLimitError ||
  (e instanceof Stripe.errors.StripeError && (e.statusCode ?? 0) >= 500);

export class StripeProcessor implements PaymentProcessor {
  readonly name = 'stripe';
  /** Raw card numbers are refused unless the operator opted in (STRIPE_FORWARD_RAW_CARDS, docs/payments.md). */
  readonly acceptsRawCards: boolean;

  constructor(
    private readonly pg: PgPool,
    private readonly stripe: Stripe,
    opts: { forwardRawCards?: boolean } = {},
  ) {
    this.acceptsRawCards = opts.forwardRawCards === true;
  }

  /** Never called with Stripe: raw cards are refused, or tokenised (tokenizeCard) and saved like a PaymentMethod id. */
  async verifyCard(_card: CardToVerify): Promise<VerifyCardResult> {
    throw new Error('raw card numbers reach Stripe only through tokenizeCard');
  }

  /** The opt-in (STRIPE_FORWARD_RAW_CARDS): a PaymentMethod made from the raw details; nothing of them is kept. */
  async tokenizeCard(card: CardToVerify): Promise<TokenizeCardResult> {
    if (!this.acceptsRawCards)
      throw new Error('raw card numbers are not forwarded to Stripe (STRIPE_FORWARD_RAW_CARDS)');
    try {
      const pm = await this.stripe.paymentMethods.create({
        type: 'card',
        card: { number: card.number, exp_month: card.exp_month, exp_year: card.exp_year, cvc: card.cvc },
      });
      return { ok: true, token: pm.id };
    } catch (e) {
      if (e instanceof Stripe.errors.StripeCardError)
        return { ok: false, code: e.decline_code ?? e.code ?? 'card_declined', message: e.message };
      throw e;
    }
  }

  /** The account's Stripe Customer, made once. */
  async customerFor(accountId: string): Promise<string> {
    const known = await stripeCustomerOf(this.pg, accountId);
    if (known) return known;
    const c = await this.stripe.customers.create(
      { metadata: { account_id: accountId } },
      { idempotencyKey: `meterline-customer:${accountId}` },
    );
    return recordStripeCustomer(this.pg, accountId, c.id);
  }

  async savePaymentMethod(accountId: string, token: string): Promise<SavePaymentMethodResult> {
    const customer = await this.customerFor(accountId);
    try {
      const si = await this.stripe.setupIntents.create({
        customer,
        payment_method: token,
        confirm: true,
        usage: 'off_session',
        metadata: { account_id: accountId },
      });
      if (si.status === 'requires_action')
        return {
          ok: false,
          status: 402,
          code: 'authentication_required',
          message: 'The bank asks the customer to authenticate this card (3-D Secure) on the hosted card page first.',
        };
      if (si.status !== 'succeeded')
        return {
          ok: false,
          status: 402,
          code: 'card_declined',
          message: `Stripe could not set up the card (${si.status}).`,
        };
      const pm = await this.stripe.paymentMethods.retrieve(
        typeof si.payment_method === 'string' ? si.payment_method : si.payment_method!.id,
      );
      const card = pm.card!;
      return {
        ok: true,
        token: pm.id,
        brand: card.brand,
        last4: card.last4,
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        fingerprint: card.fingerprint ?? null,
      };
    } catch (e) {
      if (e instanceof Stripe.errors.StripeCardError)
        return { ok: false, status: 402, code: e.decline_code ?? e.code ?? 'card_declined', message: e.message };
      if (e instanceof Stripe.errors.StripeInvalidRequestError && e.code === 'resource_missing')
        return {
          ok: false,
          status: 404,
          code: 'payment_method_not_found',
          message: `Stripe has no payment method ${token}.`,
        };
      throw e;
    }
  }

  async charge(req: ChargeRequest): Promise<ChargeResult> {
    if (!req.accountId) throw new RangeError('a Stripe charge needs the account (its Customer)');
    const customer = await this.customerFor(req.accountId);
    try {
      const pi = await this.stripe.paymentIntents.create(
        {
          amount: toMinor(req.amount, req.currency),
          currency: req.currency.toLowerCase(),
          customer,
          payment_method: req.paymentMethod.processor_token,
          confirm: true,
          off_session: true,
          description: req.invoiceId ? `Invoice ${req.invoiceId}` : undefined,
          metadata: {
            [ATTEMPT_KEY]: req.idempotencyKey,
            ...(req.invoiceId ? { invoice_id: req.invoiceId } : {}),
            ...(req.attempt !== undefined ? { attempt: String(req.attempt) } : {}),
            account_id: req.accountId,
          },
        },
        { idempotencyKey: req.idempotencyKey },
      );
      const outcome = outcomeOfIntent(pi);
      if (!outcome) throw new ChargeOutcomeUnknownError(`PaymentIntent ${pi.id} is ${pi.status}`);
      return outcome;
    } catch (e) {
      if (e instanceof ChargeOutcomeUnknownError) throw e;
      if (e instanceof Stripe.errors.StripeCardError) {
        if (e.code === 'authentication_required' && e.payment_intent)
          return { status: 'requires_action', id: e.payment_intent.id };
        return {
          status: 'failed',
          failure_code: failureOf(e.code, e.decline_code),
          ...(e.decline_code ? { decline_code: e.decline_code } : {}),
        };
      }
      if (isUnknownOutcome(e))
        throw new ChargeOutcomeUnknownError(`no answer from Stripe for ${req.idempotencyKey}`, { cause: e });
      throw e;
    }
  }

  async createSetupIntent(accountId: string): Promise<{ clientSecret: string }> {
    const si = await this.stripe.setupIntents.create({
      customer: await this.customerFor(accountId),
      usage: 'off_session',
      metadata: { account_id: accountId },
    });
    return { clientSecret: si.client_secret! };
  }

  async paymentInBrowser(
    paymentId: string,
  ): Promise<{ clientSecret: string; paymentMethod: string | null; outcome: ChargeResult | null }> {
    const pi = await this.stripe.paymentIntents.retrieve(paymentId);
    const pm = typeof pi.payment_method === 'string' ? pi.payment_method : (pi.payment_method?.id ?? null);
    return { clientSecret: pi.client_secret!, paymentMethod: pm, outcome: outcomeOfIntent(pi) };
  }

  async findCharge(req: ChargeRequest): Promise<ChargeResult | null> {
    const found = await this.stripe.paymentIntents.search({
      query: `metadata['${ATTEMPT_KEY}']:'${req.idempotencyKey.replace(/'/g, "\\'")}'`,
      limit: 1,
    });
    const pi = found.data[0];
    return pi ? outcomeOfIntent(pi) : null;
  }

  async refund(req: RefundRequest): Promise<RefundResult> {
    try {
      const r = await this.stripe.refunds.create(
        {
          payment_intent: req.chargeId,
          amount: toMinor(req.amount, req.currency),
          metadata: { meterline_refund: req.idempotencyKey },
        },
        { idempotencyKey: req.idempotencyKey },
      );
      return r.status === 'failed' || r.status === 'canceled'
        ? { status: 'failed', failure_code: 'processing_error' }
        : { status: 'succeeded', id: r.id };
    } catch (e) {
      if (e instanceof Stripe.errors.StripeInvalidRequestError) {
        if (e.code === 'resource_missing' || e.code === 'charge_not_refundable')
          return { status: 'failed', failure_code: 'charge_not_found' };
        if (e.code === 'amount_too_large' || e.code === 'charge_already_refunded')
          return { status: 'failed', failure_code: 'amount_exceeds_charge' };
        if (e.code === 'charge_disputed') return { status: 'failed', failure_code: 'charge_disputed' };
      }
      throw e;
    }
  }
}
