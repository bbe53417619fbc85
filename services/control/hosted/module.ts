import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createInvoicePdfPool } from '../../workers/pool.js';
import { createPaymentProcessor } from '../../domain/payments/create.js';
import type { InvoicePdfPool } from '../invoices/download.js';
import { hostedAssetRoutes } from './assets.js';
import { hostedCardPageRoute } from './card-page.js';
import { hostedSaveCardRoute } from './card-save.js';
import { paymentMethodLinkRoute } from './card-link.js';
import { hostedConfirmRoute } from './invoice-confirm.js';
import { invoiceLinkRoutes } from './invoice-link.js';
import { hostedInvoicePageRoute } from './invoice-page.js';
import { hostedPayRoute } from './invoice-pay.js';
import { hostedInvoicePdfRoute } from './invoice-pdf.js';
import { hostedSetupIntentRoutes } from './setup-intent.js';

/**
 * The hosted pages (docs/payments.md "Hosted pages"): the invoice page and the "update payment method" page, the
 * JSON their script posts, their assets, and the /v1 routes that revoke, rotate and make their links.
 */
export const hostedModule: RouteModuleFactory = (deps) => {
  let pool: InvoicePdfPool | undefined;
  const processor = createPaymentProcessor(deps.pg, deps.config);
  return {
    name: 'hosted',
    area: 'control',
    register(server) {
      for (const r of hostedAssetRoutes()) server.route(r);
      server.route(hostedInvoicePageRoute(deps, processor));
      server.route(hostedInvoicePdfRoute(deps, () => (pool ??= createInvoicePdfPool())));
      server.route(hostedPayRoute(deps, processor));
      server.route(hostedConfirmRoute(deps, processor));
      for (const r of hostedSetupIntentRoutes(deps, processor)) server.route(r);
      server.route(hostedCardPageRoute(deps, processor));
      server.route(hostedSaveCardRoute(deps, processor));
      for (const r of invoiceLinkRoutes(deps)) server.route(r);
      server.route(paymentMethodLinkRoute(deps));
    },
    async stop() {
      const p = pool;
      pool = undefined;
      await p?.destroy();
    },
  };
};
