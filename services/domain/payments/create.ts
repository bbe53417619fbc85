import type { PgPool } from '../../../shared/clients/postgres.js';
import type { PaymentProcessor } from './processor.js';
import { SandboxProcessor } from './sandbox.js';

/** The processor of this deployment. Only the sandbox exists; it keeps its ledger of charges in `pg`. */
export function createPaymentProcessor(pg: PgPool): PaymentProcessor {
  return new SandboxProcessor(pg);
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
