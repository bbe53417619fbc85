import { bool, int, secretFile, stripeKey, url, oneOf, type VarSpec } from './config-parsers.js';

/** The payment processor's settings (docs/payments.md), a part of the one Config (shared/config.ts). */
export interface PaymentConfig {
  /** Who charges cards (docs/payments.md): the built-in sandbox or Stripe. */
  PAYMENT_PROCESSOR: 'sandbox' | 'stripe';
  /** Stripe's secret API key (or the contents of STRIPE_SECRET_KEY_FILE); never logged. */
  STRIPE_SECRET_KEY: string;
  STRIPE_SECRET_KEY_FILE: string;
  /** The signing secret of the webhook endpoint registered with Stripe (or of STRIPE_WEBHOOK_SECRET_FILE). */
  STRIPE_WEBHOOK_SECRET: string;
  STRIPE_WEBHOOK_SECRET_FILE: string;
  /** Where the Stripe SDK sends its requests: empty = api.stripe.com; the stack's simulator in tests. */
  STRIPE_API_BASE: string;
  STRIPE_TIMEOUT_MS: number;
  STRIPE_MAX_NETWORK_RETRIES: number;
  /** The opt-in for operators with their own PCI DSS attestation: raw card details forwarded to Stripe. */
  STRIPE_FORWARD_RAW_CARDS: boolean;
  /** Stripe's publishable key (`pk_…`): the hosted pages hand it to Stripe.js (it is public by design). */
  STRIPE_PUBLISHABLE_KEY: string;
  /** Where the hosted pages load Stripe.js from: Stripe's own in production, the simulator's stand-in in tests. */
  STRIPE_JS_URL: string;
}

export const PAYMENT_SPEC: { [K in keyof PaymentConfig]: VarSpec<PaymentConfig[K]> } = {
  PAYMENT_PROCESSOR: {
    parse: oneOf(['sandbox', 'stripe'] as const),
    default: 'sandbox',
    describe: 'who charges cards (docs/payments.md): the built-in `sandbox` (test cards, no money moves) or `stripe`',
  },
  STRIPE_SECRET_KEY: {
    parse: stripeKey('sk_', 'rk_'),
    default: '',
    describe:
      'Stripe secret (or restricted) API key, `sk_…`; required with PAYMENT_PROCESSOR=stripe unless STRIPE_SECRET_KEY_FILE is set; never logged',
  },
  STRIPE_SECRET_KEY_FILE: {
    parse: secretFile(stripeKey('sk_', 'rk_')),
    default: '',
    describe: 'a file holding the Stripe secret key (a mounted secret) instead of STRIPE_SECRET_KEY',
  },
  STRIPE_WEBHOOK_SECRET: {
    parse: stripeKey('whsec_'),
    default: '',
    describe:
      'signing secret (`whsec_…`) of the webhook endpoint registered with Stripe for /v1/processors/stripe/webhook',
  },
  STRIPE_WEBHOOK_SECRET_FILE: {
    parse: secretFile(stripeKey('whsec_')),
    default: '',
    describe: 'a file holding the webhook signing secret instead of STRIPE_WEBHOOK_SECRET',
  },
  STRIPE_API_BASE: {
    parse: url(['http', 'https']),
    default: '',
    describe:
      "Stripe API base URL the SDK talks to; empty: Stripe's own (api.stripe.com). Tests and `npm start` point it at the Stripe simulator",
  },
  STRIPE_TIMEOUT_MS: {
    parse: int(100, 600_000),
    default: 30_000,
    describe: 'how long one Stripe request may take; past it the payment attempt is `unknown` until reconciled',
  },
  STRIPE_MAX_NETWORK_RETRIES: {
    parse: int(0, 10),
    default: 1,
    describe:
      'retries of a Stripe request after a network error or 5xx (same idempotency key, so never a second charge)',
  },
  STRIPE_FORWARD_RAW_CARDS: {
    parse: bool,
    default: false,
    describe:
      'true: raw `card` details sent to POST /v1/billing/payment-methods are forwarded to Stripe (its PaymentMethods API) instead of refused — only for operators whose own PCI DSS attestation covers receiving card numbers and whose Stripe account allows raw card data (docs/payments.md)',
  },
  STRIPE_PUBLISHABLE_KEY: {
    parse: stripeKey('pk_'),
    default: '',
    describe:
      'Stripe publishable key (`pk_…`) the hosted invoice and card pages give Stripe.js; without it they offer no new card (the saved one still pays)',
  },
  STRIPE_JS_URL: {
    parse: url(['http', 'https']),
    default: 'https://js.stripe.com/v3/',
    describe:
      "where the hosted pages load Stripe.js from (its origin is allowed by their Content-Security-Policy); tests point it at the simulator's stand-in",
  },
};

/** Settings that hold only together: Stripe needs both its keys. */
export function paymentCrossChecks(c: PaymentConfig): { variable: string; message: string }[] {
  const problems: { variable: string; message: string }[] = [];
  if (c.PAYMENT_PROCESSOR === 'stripe' && !c.STRIPE_SECRET_KEY && !c.STRIPE_SECRET_KEY_FILE)
    problems.push({
      variable: 'STRIPE_SECRET_KEY',
      message: 'is required with PAYMENT_PROCESSOR=stripe (or STRIPE_SECRET_KEY_FILE)',
    });
  if (c.PAYMENT_PROCESSOR === 'stripe' && !c.STRIPE_WEBHOOK_SECRET && !c.STRIPE_WEBHOOK_SECRET_FILE)
    problems.push({
      variable: 'STRIPE_WEBHOOK_SECRET',
      message:
        'is required with PAYMENT_PROCESSOR=stripe (or STRIPE_WEBHOOK_SECRET_FILE): webhooks are verified with it',
    });
  return problems;
}
