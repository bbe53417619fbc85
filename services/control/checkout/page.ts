import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { getPlanVersion } from '../../domain/plans/store.js';
import { getProduct } from '../../domain/products/store.js';
import { getCoupon } from '../../domain/coupons/store.js';
import { customerEmailOf } from '../../domain/checkout/store.js';
import { successRedirect } from '../../domain/checkout/links.js';
import { checkoutStatus } from '../../domain/checkout/types.js';
import { chargingFor, refusedLinkPage } from '../hosted/access.js';
import { htmlPage } from '../hosted/templates.js';
import { CHECKOUT_LABELS } from '../../domain/checkout/checkout-texts.js';
import type { CheckoutSessionRow } from '../../domain/checkout/types.js';
import { legalDetails } from '../../domain/invoices/store.js';
import { localeOf, localeOfAcceptLanguage, type Locale } from '../../domain/invoices/invoice-texts.js';
import type { RequestContext } from '../../../shared/http/context.js';
import { openCheckout } from './access.js';
import { checkoutDoneBody, checkoutExpiredBody, checkoutPageBody } from './page-html.js';

/**
 * The checkout page's language (docs/checkout.md "Language"): a session has no locale of its own, so its customer's
 * when it has one (named at creation, or made from customer_email by the first card set-up: `en` until an operator
 * sets it), else the browser's Accept-Language (one of the five), else English.
 */
async function checkoutLocale(deps: ApiDeps, ctx: RequestContext, s: CheckoutSessionRow): Promise<Locale> {
  if (s.account_id) return localeOf((await legalDetails(deps.pg, s.account_id)).locale);
  return localeOfAcceptLanguage(ctx.headers['accept-language']);
}

/**
 * GET /hosted/checkout/:session_id/:token — the hosted checkout page (docs/checkout.md): no sign-in, the link is the
 * secret. Open: the plan and its prices, the card element, a promotion code field when allowed. Complete: a link on
 * to the success URL. Expired: 410 and a page saying so. A wrong link: 404.
 */
export function checkoutPageRoute(deps: ApiDeps, live: PaymentProcessor): RouteDef {
  return {
    method: 'GET',
    path: '/hosted/checkout/:session_id/:token',
    auth: 'public',
    handler: async (ctx) => {
      const s = await openCheckout(deps, ctx);
      if (!s) return refusedLinkPage(deps, ctx, { state: 'not_found' });
      const state = checkoutStatus(s, new Date());
      const lang = await checkoutLocale(deps, ctx, s);
      const title = `${CHECKOUT_LABELS[lang].checkout}${deps.config.SELLER_NAME ? ` · ${deps.config.SELLER_NAME}` : ''}`;
      if (state === 'complete')
        return htmlPage(deps.config, { lang, title, body: checkoutDoneBody(successRedirect(s), lang) });
      if (state === 'expired')
        return htmlPage(deps.config, { status: 410, lang, title, body: checkoutExpiredBody(s.cancel_url, lang) });
      const version = await getPlanVersion(deps.pg, s.plan_id, s.plan_version ?? undefined);
      const products = new Map(
        await Promise.all(
          version.items.map(async (i) => [i.product_id, await getProduct(deps.pg, i.product_id)] as const),
        ),
      );
      const inBrowser = s.account_id
        ? (await chargingFor(deps, live, s.account_id)).inBrowser
        : Boolean(live.createSetupIntent && deps.config.STRIPE_PUBLISHABLE_KEY);
      return htmlPage(deps.config, {
        lang,
        title,
        body: checkoutPageBody({
          locale: lang,
          session: s,
          version,
          products,
          coupon: s.coupon_id ? await getCoupon(deps.pg, s.coupon_id) : null,
          email: s.customer_email ?? (s.account_id ? await customerEmailOf(deps.pg, s.account_id) : null),
          stripeKey: inBrowser ? deps.config.STRIPE_PUBLISHABLE_KEY : null,
          seller: deps.config.SELLER_NAME,
        }),
        stripeJs: inBrowser,
        checkoutScript: inBrowser,
      });
    },
    doc: {
      summary:
        'The hosted checkout page (HTML, no sign-in: the link is the secret); 404 for a wrong link, 410 once expired',
      tags: ['checkout'],
      responses: {
        '200': { description: 'the checkout page', schema: { type: 'string' }, contentType: 'text/html' },
        '404': { description: 'no such link (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
        '410': { description: 'the session expired (HTML)', schema: { type: 'string' }, contentType: 'text/html' },
      },
    },
  };
}
