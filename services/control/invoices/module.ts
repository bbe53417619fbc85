import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createInvoicePdfPool } from '../../workers/pool.js';
import { listInvoicesRoute } from './list.js';
import { getInvoiceRoute } from './get.js';
import { downloadInvoiceRoute, type InvoicePdfPool } from './download.js';
import { upcomingInvoiceRoute } from './upcoming.js';
import { payInvoiceRoute } from './pay.js';
import { voidInvoiceRoute } from './void.js';
import { createPaymentProcessor } from '../../domain/payments/create.js';

/**
 * /v1/billing/invoices: read side of invoices (the billing run writes them). The PDF worker pool is
 * created on the first download, so api processes that never render one start no threads.
 */
export const invoicesModule: RouteModuleFactory = (deps) => {
  let pool: InvoicePdfPool | undefined;
  return {
    name: 'invoices',
    area: 'control',
    register(server) {
      server.route(listInvoicesRoute(deps));
      server.route(upcomingInvoiceRoute(deps));
      server.route(payInvoiceRoute(deps, createPaymentProcessor(deps.pg)));
      server.route(voidInvoiceRoute(deps));
      server.route(getInvoiceRoute(deps));
      server.route(downloadInvoiceRoute(deps, () => (pool ??= createInvoicePdfPool())));
    },
    async stop() {
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
};
