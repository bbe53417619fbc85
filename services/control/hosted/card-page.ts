import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { defaultChargeablePaymentMethod } from '../../domain/payment-methods/store.js';
import { accountName, legalDetails } from '../../domain/invoices/store.js';
import { PAGE_LABELS } from '../../domain/hosted-pages/page-texts.js';
import { invoiceTexts } from '../../domain/invoices/invoice-texts.js';
import { scriptTexts } from './invoice-html.js';
import { chargingFor, openCardPage, refusedLinkPage } from './access.js';
import { esc, htmlPage } from './templates.js';

/**
 * GET /hosted/cards/:token — the hosted "update payment method" page: Stripe's card element, a SetupIntent, and the
 * card saved as the customer's default. 404 for a wrong link; 410 when revoked (a newer link was made) or expired.
 */
export function hostedCardPageRoute(deps: ApiDeps, live: PaymentProcessor): RouteDef {
  return {
    method: 'GET',
    path: '/hosted/cards/:token',
    auth: 'public',
    handler: async (ctx) => {
      const opened = await openCardPage(deps, ctx);
      if (opened.state !== 'ok') return refusedLinkPage(deps, ctx, opened);
      const [name, pm, charging, legal] = await Promise.all([
        accountName(deps.pg, opened.accountId),
        defaultChargeablePaymentMethod(deps.pg, opened.accountId),
        chargingFor(deps, live, opened.accountId),
        legalDetails(deps.pg, opened.accountId),
      ]);
      // In the customer's locale (services/domain/hosted-pages/page-texts.ts).
      const { locale } = invoiceTexts(legal.locale);
      const l = PAGE_LABELS[locale];
      const seller = deps.config.SELLER_NAME;
      const form = charging.inBrowser
        ? `<div id="card-element" class="card-element"></div>
<button type="button" id="save-card">${esc(l.saveCard)}</button>`
        : `<p class="note" id="no-card-entry">${esc(l.noCardEntry)}</p>`;
      return htmlPage(deps.config, {
        lang: locale,
        title: `${l.cardTitle}${seller ? ` · ${seller}` : ''}`,
        body: `<h1>${esc(seller || l.paymentMethod)}</h1>
<section class="pay card-page" id="card" data-stripe-key="${esc(charging.inBrowser ? deps.config.STRIPE_PUBLISHABLE_KEY : '')}" data-texts="${scriptTexts(locale)}">
<h2>${esc(l.updateOf)} <span class="buyer-name">${esc(name ?? '')}</span></h2>
<p id="current-card">${pm ? esc(l.defaultCard(`${pm.brand} •••• ${pm.last4}`)) : esc(l.noCardYet)}</p>
<p class="message" id="pay-message" role="status" aria-live="polite"></p>
${form}
<p class="note">${esc(l.cardPageNote)}</p>
</section>`,
        stripeJs: charging.inBrowser,
        script: charging.inBrowser,
      });
    },
    doc: {
      summary:
        'The hosted "update payment method" page (HTML, no sign-in: the link is the secret); 404 for a wrong link, 410 for a revoked or expired one',
      tags: ['hosted pages'],
      responses: {
        '200': { description: 'the card page', schema: { type: 'string' }, contentType: 'text/html' },
        '404': { description: 'no such link (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
        '410': { description: 'revoked or expired (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
      },
    },
  };
}
