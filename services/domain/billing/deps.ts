import type { ClickHouseClient } from '@clickhouse/client';
import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import type { PaymentProcessor } from '../payments/processor.js';
import type { HostedLinks } from '../hosted-pages/links.js';
import type { InvoiceLinesTask, PricedInvoice } from '../pricing/invoice-lines.js';

/**
 * Invoice line maths off the event loop. The engine only declares it; whoever builds BillingDeps passes one
 * (services/workers/billing-deps.ts: a piscina pool of services/workers/invoice-lines.ts).
 */
export interface InvoiceLinesPool {
  run(task: InvoiceLinesTask): Promise<PricedInvoice[]>;
  destroy(): Promise<void>;
}

/** What the billing engine works with: every entry point builds it with services/workers/billing-deps.ts. */
export interface BillingDeps {
  pg: PgPool;
  clickhouse: ClickHouseClient;
  /** ClickHouse database holding usage_records. */
  database: string;
  /** BILLING_GRACE_SECONDS: a period closes this long after its end. */
  graceSeconds: number;
  /** INVOICE_NUMBER_PREFIX: printed before each number the close gives (services/domain/invoices/numbering.ts). */
  numberPrefix: string;
  /** BILLING_DRAFTS: a period's invoice is a draft from the period's end until the grace period is over. */
  drafts: boolean;
  /** BILLING_THRESHOLD_INVOICE_SPACING_SECONDS: at most one threshold invoice per subscription within it. */
  thresholdSpacingSeconds?: number;
  processor: PaymentProcessor;
  linesPool: InvoiceLinesPool;
  log: Logger;
  /** Builds the hosted invoice links that invoice.created and invoice.payment_action_required carry. */
  hostedLinks?: HostedLinks;
}

/** Time spent per store during a run, for the bench and the run's log line. */
export interface BillingTimings {
  clickhouse_ms: number;
  piscina_ms: number;
  postgres_ms: number;
  processor_ms: number;
}

export const newTimings = (): BillingTimings => ({ clickhouse_ms: 0, piscina_ms: 0, postgres_ms: 0, processor_ms: 0 });

/** Adds the time `fn` takes to `timings[key]`. */
export async function timed<T>(
  timings: BillingTimings | undefined,
  key: keyof BillingTimings,
  fn: () => Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    if (timings) timings[key] += performance.now() - t0;
  }
}
