import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { payPanel } from '../../domain/hosted-pages/invoice-view.js';
import { attemptAwaitingCustomer } from '../../domain/billing/payments.js';
import { defaultChargeablePaymentMethod } from '../../domain/payment-methods/store.js';
import { invoiceDocument } from '../../domain/documents/invoice.js';
import { chargingFor, openInvoice, refusedLinkPage } from './access.js';
import { invoicePageBody } from './invoice-html.js';
import { htmlPage } from './templates.js';
import { PAGE_LABELS } from '../../domain/hosted-pages/page-texts.js';
import { invoiceTexts } from '../../domain/invoices/invoice-texts.js';

/**
 * GET /hosted/invoices/:invoice_id/:token — the hosted invoice page (docs/payments.md "Hosted pages"): no sign-in, the
 * link is the secret. The invoice as its PDF shows it and, while open, the Pay form. A wrong token is 404 like an
 * unknown invoice; a revoked or replaced link 410.
 */
export function hostedInvoicePageRoute(deps: ApiDeps, live: PaymentProcessor): RouteDef {
  return {
    method: 'GET',
    path: '/hosted/invoices/:invoice_id/:token',
    auth: 'public',
    handler: async (ctx) => {
      const opened = await openInvoice(deps, ctx);
      if (opened.state !== 'ok') return refusedLinkPage(deps, ctx, opened);
      const inv = opened.invoice.invoice;
      const [task, charging, pm, waiting] = await Promise.all([
        invoiceDocument(deps, opened.accountId, inv.id),
        chargingFor(deps, live, opened.accountId),
        defaultChargeablePaymentMethod(deps.pg, opened.accountId),
        attemptAwaitingCustomer(deps.pg, inv.id),
      ]);
      const pay = payPanel(inv, pm, waiting, charging.inBrowser);
      const { locale } = invoiceTexts(task.locale);
      return htmlPage(deps.config, {
        lang: locale,
        title: `${PAGE_LABELS[locale].invoiceTitle(inv.number ?? inv.id)}${task.seller?.name ? ` · ${task.seller.name}` : ''}`,
        body: invoicePageBody(task, pay, deps.config.STRIPE_PUBLISHABLE_KEY, `${ctx.path}/pdf`),
        stripeJs: pay.newCard,
        script: pay.payable,
      });
    },
    doc: {
      summary:
        'The hosted invoice page (HTML, no sign-in: the link from hosted_invoice_url is the secret); 404 for a wrong link, 410 for a revoked one',
      tags: ['hosted pages'],
      responses: {
        '200': { description: 'the invoice page', schema: { type: 'string' }, contentType: 'text/html' },
        '404': { description: 'no such link (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
        '410': {
          description: 'the link was revoked or replaced (HTML)',
          schema: { type: 'string' },
          contentType: 'text/html',
        },
      },
    },
  };
}
