import type { PgPool } from '../../../shared/clients/postgres.js';
import type { PaymentProcessor } from './processor.js';
import { SandboxProcessor } from './sandbox.js';

/** The processor of this deployment. Only the sandbox exists; it keeps its ledger of charges in `pg`. */
export function createPaymentProcessor(pg: PgPool): PaymentProcessor {
  return new SandboxProcessor(pg);
}
