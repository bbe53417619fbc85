import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createInvoicePdfPool } from '../../workers/pool.js';
import { listInvoicesRoute } from './list.js';
import { getInvoiceRoute } from './get.js';
import { downloadInvoiceRoute, type InvoicePdfPool } from './download.js';
import { upcomingInvoiceRoute } from './upcoming.js';
import { payInvoiceRoute } from './pay.js';
import { voidInvoiceRoute } from './void.js';
import { createPaymentProcessor } from '../../domain/payments/create.js';
import { addInvoiceLineRoute, finalizeInvoiceRoute } from './drafts.js';
import type { BillingDeps } from '../../domain/billing/deps.js';
import { billingDeps } from '../../workers/billing-deps.js';

/**
 * /v1/billing/invoices: read side of invoices (the billing run writes them). The PDF worker pool is
 * created on the first download, so api processes that never render one start no threads.
 */
export const invoicesModule: RouteModuleFactory = (deps) => {
  let pool: InvoicePdfPool | undefined;
  // Finalizing a draft prices it in this process: its invoice-line worker pool starts on the first finalize.
  let billing: BillingDeps | undefined;
  const lazyBillingDeps = (): BillingDeps => (billing ??= billingDeps(deps));
  return {
    name: 'invoices',
    area: 'control',
    register(server) {
      server.route(listInvoicesRoute(deps));
      server.route(upcomingInvoiceRoute(deps));
      server.route(payInvoiceRoute(deps, createPaymentProcessor(deps.pg, deps.config)));
      server.route(voidInvoiceRoute(deps));
      server.route(finalizeInvoiceRoute(deps, lazyBillingDeps));
      server.route(addInvoiceLineRoute(deps));
      server.route(getInvoiceRoute(deps));
      server.route(downloadInvoiceRoute(deps, () => (pool ??= createInvoicePdfPool())));
    },
    async stop() {
      const p = pool;
      const lines = billing?.linesPool;
      pool = undefined;
      billing = undefined;
      await Promise.all([p?.destroy(), lines?.destroy()]);
    },
  };
};
