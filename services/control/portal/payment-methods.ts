import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { esc } from '../hosted/templates.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { seeOther, visitPage } from './layout.js';
import { csrfField, portalGet, portalPost } from './route.js';
import { ACCOUNT_LABELS } from '../../domain/portal/account-texts.js';
import { PORTAL_LABELS } from '../../domain/portal/portal-texts.js';

/**
 * GET /portal/payment-methods — the customer's cards, the default marked; another can be made the default, and a
 * new card is added on the hosted card page (the processor's card element, 3-D Secure included).
 */
export function paymentMethodsRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalGet(deps, '/portal/payment-methods', 'the payment methods', async (visit, ctx) => {
    const list = await asCustomer(visit, api('GET /v1/billing/payment-methods'), { query: { per_page: '100' } });
    // In the visit's language (services/domain/portal/account-texts.ts).
    const l = ACCOUNT_LABELS[visit.locale];
    const rows = list.data
      .map(
        (
          pm: any,
        ) => `<li id="pm-${esc(pm.id)}">${esc(pm.card.brand)} •••• ${esc(pm.card.last4)} <span class="muted">${esc(l.expires(numText(pm.card.exp_month), numText(pm.card.exp_year)))}</span>
${pm.is_default ? `<strong class="default-card">${esc(l.defaultCard)}</strong>` : `<form class="inline" method="post" action="/portal/payment-methods/${esc(pm.id)}/default">${csrfField(visit)}<button type="submit" id="default-${esc(pm.id)}">${esc(l.makeDefault)}</button></form>`}</li>`,
      )
      .join('\n');
    return visitPage(deps.config, visit, {
      title: PORTAL_LABELS[visit.locale].sections.paymentMethods,
      current: '/portal/payment-methods',
      flash: ctx.query.get('done') === 'default' ? l.defaultChanged : undefined,
      body: `${rows ? `<ul class="cards" id="cards">${rows}</ul>` : `<p id="no-cards">${esc(l.noCards)}</p>`}
<form method="post" action="/portal/payment-methods/new">${csrfField(visit)}<button type="submit" id="add-card">${esc(l.addCard)}</button></form>
<p class="note">${esc(l.newCardNote)}</p>`,
    });
  });
}

/** POST /portal/payment-methods/:payment_method_id/default — the customer's own PATCH …/default (404 for others'). */
export function setDefaultCardRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalPost(
    deps,
    '/portal/payment-methods/:payment_method_id/default',
    'make a card the default',
    async (visit, ctx) => {
      await asCustomer(visit, api('PATCH /v1/billing/payment-methods/:payment_method_id/default'), {
        params: { payment_method_id: ctx.params.payment_method_id! },
      });
      return '/portal/payment-methods?done=default';
    },
  );
}

/** POST /portal/payment-methods/new — a hosted card page link of the customer's own (as its token would make), and there. */
export function addCardRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalPost(deps, '/portal/payment-methods/new', 'add a card on the hosted card page', async (visit) => {
    const link = await asCustomer(visit, api('POST /v1/billing/payment-method-links'), { body: {} });
    return seeOther(link.url);
  });
}
