import type { RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CHECKOUT_LABELS } from '../../domain/checkout/checkout-texts.js';
import { DECLINE_LABELS } from '../../domain/payments/decline-texts.js';
import { REFUSAL_FUNCTION } from '../hosted/decline-script.js';

/**
 * The checkout page's script (served as /hosted/assets/checkout.js; the CSP allows no inline script). As the hosted
 * pages' pay.js it talks to Stripe.js only through production Stripe.js calls — Stripe(pk), elements().create('card'),
 * mount, confirmCardSetup — and sees only seti_/pm_ ids. Subscribe is disabled from the first click until an answer:
 * a double click sends one request; a refresh or a second tab is answered by the server (the session completes once).
 * Its messages come in the page's language from the root's data-texts (services/domain/checkout/checkout-texts.ts
 * `script`, its `refusals` by problem code, and a refused card's reasons by code: services/control/hosted/
 * decline-script.ts); without one, English.
 */
export const CHECKOUT_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('checkout');
  if (!root) return;
  var message = document.getElementById('pay-message');
  var button = document.getElementById('subscribe');
  var code = document.getElementById('promotion-code');
  var texts = ${JSON.stringify({ ...CHECKOUT_LABELS.en.script, declines: DECLINE_LABELS.en })};
  try {
    var given = JSON.parse(root.getAttribute('data-texts') || '{}');
    Object.keys(texts).forEach(function (k) { if (typeof given[k] === typeof texts[k]) texts[k] = given[k]; });
  } catch (e) { /* English */ }
  ${REFUSAL_FUNCTION}
  var stripe = window.Stripe
    ? window.Stripe(root.getAttribute('data-stripe-key'), { locale: document.documentElement.lang || 'auto' })
    : null;
  var card = null;
  if (stripe) {
    card = stripe.elements().create('card');
    card.mount('#card-element');
  }
  function show(text, kind) { message.textContent = text; message.className = 'message ' + kind; }
  function post(path, body) {
    return fetch(location.pathname + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      credentials: 'omit',
      body: JSON.stringify(body || {}),
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) {
        if (r.status >= 400)
          throw new Error(
            refusal(texts.declines, j) || refusal(texts.refusals, j) || (j && j.detail) ||
              texts.failedStatus.replace('{status}', String(r.status)),
          );
        return j;
      });
    });
  }
  if (!button || !card) return;
  button.addEventListener('click', function () {
    if (button.disabled) return;
    button.disabled = true;
    show(texts.checkingCard, 'info');
    post('/setup-intent').then(function (r) {
      return stripe.confirmCardSetup(r.client_secret, { payment_method: { card: card } });
    }).then(function (res) {
      if (res.error) throw new Error(stripeError(texts.declines, res.error));
      var pm = typeof res.setupIntent.payment_method === 'string' ? res.setupIntent.payment_method : res.setupIntent.payment_method.id;
      show(texts.subscribing, 'info');
      var body = { payment_method: pm };
      if (code && code.value.trim()) body.promotion_code = code.value.trim();
      return post('/complete', body);
    }).then(function (done) {
      show(texts.subscribed, 'ok');
      location.assign(done.redirect_url);
    }).catch(function (e) {
      show(e.message, 'error');
      button.disabled = false;
    });
  });
})();
`;

/** GET /hosted/assets/checkout.js ('self' in the hosted pages' CSP). */
export function checkoutScriptRoute(): RouteDef {
  return {
    method: 'GET',
    path: '/hosted/assets/checkout.js',
    auth: 'public',
    handler: () =>
      reply.file(CHECKOUT_SCRIPT, 'text/javascript; charset=utf-8', {
        'Cache-Control': 'public, max-age=300',
        'X-Content-Type-Options': 'nosniff',
      }),
    doc: {
      summary: "The hosted checkout page's script",
      tags: ['checkout'],
      responses: {
        '200': { description: 'the file', schema: { type: 'string' }, contentType: 'text/javascript; charset=utf-8' },
      },
    },
  };
}
