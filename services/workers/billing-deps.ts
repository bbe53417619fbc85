import type { ClickHouseClient } from '@clickhouse/client';
import type { PgPool } from '../../shared/clients/postgres.js';
import type { Logger } from '../../shared/logging.js';
import type { Config } from '../../shared/config.js';
import type { BillingDeps } from '../domain/billing/deps.js';
import { createPaymentProcessor } from '../domain/payments/create.js';
import { createInvoiceLinesPool } from './pool.js';
import { hostedKey } from '../domain/hosted-pages/tokens.js';

/**
 * The one BillingDeps factory: every entry point that runs the billing engine (the billing role's scheduler, the
 * CLI, the invoices feature's finalize, the test-clocks feature's advance, the bench) builds its deps here, so a
 * new engine setting is read from the config in one place. It lives beside the invoice-lines pool it starts
 * (features may not import roles). The engine's dependencies over existing connections; the caller destroys
 * `linesPool` when done.
 */
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
    numberPrefix: base.config.INVOICE_NUMBER_PREFIX,
    drafts: base.config.BILLING_DRAFTS,
    thresholdSpacingSeconds: base.config.BILLING_THRESHOLD_INVOICE_SPACING_SECONDS,
    processor: createPaymentProcessor(base.pg, base.config),
    linesPool: createInvoiceLinesPool(),
    log: base.log,
    hostedLinks: { key: hostedKey(base.config.SECRET_KEY), baseUrl: base.config.PUBLIC_BASE_URL },
  };
}
