import type { ClickHouseClient } from '@clickhouse/client';
import type { Piscina } from 'piscina';
import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import type { Config } from '../../../shared/config.js';
import type { PaymentProcessor } from '../payments/processor.js';
import { createPaymentProcessor } from '../payments/create.js';
import { createInvoiceLinesPool } from '../../workers/pool.js';
import type { InvoiceLinesTask } from '../../workers/invoice-lines.js';
import type { PricedInvoice } from '../pricing/invoice-lines.js';

/** What the billing engine works with: the billing role, the CLI and the api's upcoming/pay routes build it. */
export interface BillingDeps {
  pg: PgPool;
  clickhouse: ClickHouseClient;
  /** ClickHouse database holding usage_records. */
  database: string;
  /** BILLING_GRACE_SECONDS: a period closes this long after its end. */
  graceSeconds: number;
  processor: PaymentProcessor;
  /** piscina pool running services/workers/invoice-lines.ts. */
  linesPool: Piscina<InvoiceLinesTask, PricedInvoice[]>;
  log: Logger;
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

/** The engine's dependencies over existing connections; the caller destroys `linesPool` when done. */
export function billingDeps(base: {
  pg: PgPool;
  clickhouse: ClickHouseClient;
  config: Config;
  log: Logger;
}): BillingDeps {
  return {
    pg: base.pg,
    clickhouse: base.clickhouse,
    database: base.config.CLICKHOUSE_DATABASE,
    graceSeconds: base.config.BILLING_GRACE_SECONDS,
    processor: createPaymentProcessor(base.pg),
    linesPool: createInvoiceLinesPool(),
    log: base.log,
  };
}
