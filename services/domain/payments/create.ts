import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Config } from '../../../shared/config.js';
import type { PaymentProcessor } from './processor.js';
import { SandboxProcessor } from './sandbox.js';
import type Stripe from 'stripe';
import { StripeProcessor, stripeClient } from './stripe.js';

export type ProcessorConfig = Pick<
  Config,
  | 'PAYMENT_PROCESSOR'
  | 'STRIPE_SECRET_KEY'
  | 'STRIPE_SECRET_KEY_FILE'
  | 'STRIPE_API_BASE'
  | 'STRIPE_TIMEOUT_MS'
  | 'STRIPE_MAX_NETWORK_RETRIES'
  | 'STRIPE_FORWARD_RAW_CARDS'
>;

/**
 * The processor of this deployment (PAYMENT_PROCESSOR, docs/payments.md): the sandbox, which keeps its ledger of
 * charges in `pg`, or Stripe through its SDK. Without a configuration: the sandbox.
 */
export function createPaymentProcessor(pg: PgPool, config?: ProcessorConfig): PaymentProcessor {
  if (config?.PAYMENT_PROCESSOR !== 'stripe') return new SandboxProcessor(pg);
  return new StripeProcessor(pg, stripeFromConfig(config), { forwardRawCards: config.STRIPE_FORWARD_RAW_CARDS });
}

/** The Stripe SDK as configured (the key from STRIPE_SECRET_KEY_FILE when set, else STRIPE_SECRET_KEY). */
export function stripeFromConfig(config: ProcessorConfig): Stripe {
  return stripeClient({
    secretKey: config.STRIPE_SECRET_KEY_FILE || config.STRIPE_SECRET_KEY,
    apiBase: config.STRIPE_API_BASE,
    timeoutMs: config.STRIPE_TIMEOUT_MS,
    maxNetworkRetries: config.STRIPE_MAX_NETWORK_RETRIES,
  });
}

/**
 * The processor of customers on a test clock (docs/test-clocks.md): always the sandbox, whatever the deployment
 * charges live customers with, so simulated time never moves real money. Their cards are added, charged and
 * refunded through it alone.
 */
export function testClockProcessor(pg: PgPool): PaymentProcessor {
  return new SandboxProcessor(pg);
}

/** The processor for an account: the deployment's, or the sandbox for a customer on a test clock. */
export function processorFor(pg: PgPool, live: PaymentProcessor, clockId: string | null): PaymentProcessor {
  return clockId === null ? live : testClockProcessor(pg);
}
