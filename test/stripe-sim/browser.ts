import type { Account } from './state.js';

/**
 * The simulator's browser side (docs/payments.md "Hosted pages"): a stand-in for the part of Stripe.js the hosted
 * pages use — Stripe(pk), elements().create('card').mount(), confirmCardSetup, confirmCardPayment — the card element
 * as an iframe of the simulator's own origin (so, as with Stripe, the card number is typed into and sent from a frame
 * the merchant's page cannot read), and the 3-D Secure challenge page a bank would show. Browser calls authenticate
 * with the publishable key (`pk_test_<x>` is the account of `sk_test_<x>`) and may do only what Stripe lets a
 * publishable key do.
 */

export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization, content-type',
  'access-control-allow-methods': 'GET, POST',
  'access-control-max-age': '600',
};

/** The account a publishable key stands for. */
export const secretKeyOf = (pk: string) => `sk_${pk.slice(3)}`;

/**
 * What a publishable key may do: create a PaymentMethod, read or confirm a PaymentIntent or SetupIntent whose client
 * secret it presents, and (as the bank's page) finish the 3-D Secure challenge of one. Null when allowed, else why not.
 */
export function publishableRefusal(
  a: Account,
  method: string,
  path: string,
  clientSecret: string | undefined,
): string | null {
  if (method === 'POST' && path === '/v1/payment_methods') return null;
  const m =
    /^\/v1\/(?:payment_intents|setup_intents)\/([^/]+)(?:\/confirm)?$/.exec(path) ??
    (method === 'POST' ? /^\/_sim\/authenticate\/([^/]+)$/.exec(path) : null);
  if (!m) return 'This API call cannot be made with a publishable API key.';
  const x = a.objects[m[1]!];
  if (!x || !clientSecret || x.client_secret !== clientSecret)
    return 'The client_secret provided does not match the client_secret associated with this intent.';
  return null;
}

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>body{font:14px system-ui,sans-serif;margin:0;padding:4px}input{font:15px monospace;padding:6px;border:1px solid #99a;border-radius:4px;margin-right:4px}
.challenge{padding:1.5rem;text-align:center}button{font-size:15px;padding:.5rem 1rem;margin:.4rem}</style></head>
<body>${body}</body></html>`;

/** The card element's frame: three inputs; the parent's stand-in asks it to make the PaymentMethod. */
export function cardFramePage(): string {
  return page(
    'Secure card input',
    `<form id="card" autocomplete="off" onsubmit="return false">
<input name="cardnumber" placeholder="Card number" size="20" inputmode="numeric" aria-label="Card number">
<input name="exp-date" placeholder="MM / YY" size="7" aria-label="Expiry">
<input name="cvc" placeholder="CVC" size="4" aria-label="CVC"></form>
<script>
var pk = new URLSearchParams(location.search).get('pk');
window.addEventListener('message', function (e) {
  if (e.source !== window.parent || !e.data || e.data.type !== 'stripe-sim:create-pm') return;
  var f = document.getElementById('card');
  var exp = f['exp-date'].value.split('/').map(function (s) { return s.trim(); });
  var body = new URLSearchParams({ type: 'card', 'card[number]': f.cardnumber.value.replace(/\\s/g, ''),
    'card[exp_month]': exp[0] || '', 'card[exp_year]': exp[1] || '', 'card[cvc]': f.cvc.value });
  fetch('/v1/payment_methods', { method: 'POST', headers: { authorization: 'Bearer ' + pk,
    'content-type': 'application/x-www-form-urlencoded' }, body: body })
    .then(function (r) { return r.json(); })
    .then(function (j) { e.source.postMessage({ type: 'stripe-sim:pm', id: e.data.id, result: j }, e.origin); });
});
</script>`,
  );
}

/** The bank's 3-D Secure challenge (a frame over the merchant's page): complete or fail it. */
export function challengePage(): string {
  return page(
    '3-D Secure',
    `<div class="challenge"><h2>Confirm your payment</h2><p>Your bank asks you to authenticate (test mode).</p>
<button id="complete-auth" type="button">Complete authentication</button>
<button id="fail-auth" type="button">Fail authentication</button></div>
<script>
var q = new URLSearchParams(location.search);
var id = location.pathname.split('/').pop();
function finish(outcome) {
  fetch('/_sim/authenticate/' + id, { method: 'POST', headers: { authorization: 'Bearer ' + q.get('pk'),
    'content-type': 'application/json' }, body: JSON.stringify({ outcome: outcome, client_secret: q.get('client_secret') }) })
    .then(function () { window.parent.postMessage({ type: 'stripe-sim:3ds-done' }, q.get('origin')); });
}
document.getElementById('complete-auth').onclick = function () { finish('complete'); };
document.getElementById('fail-auth').onclick = function () { finish('fail'); };
</script>`,
  );
}

/** Stripe.js v3's calls the hosted pages make, with the same names, arguments and result shapes. */
export const STRIPE_JS = `(function () {
  'use strict';
  var BASE = new URL(document.currentScript.src).origin;
  var seq = 0;
  function api(pk, method, path, params) {
    var qs = new URLSearchParams();
    Object.keys(params || {}).forEach(function (k) { if (params[k] != null) qs.append(k, params[k]); });
    var get = method === 'GET';
    return fetch(BASE + path + (get ? '?' + qs : ''), { method: method,
      headers: { authorization: 'Bearer ' + pk, 'content-type': 'application/x-www-form-urlencoded' },
      body: get ? undefined : qs }).then(function (r) { return r.json(); });
  }
  function reply(win, type, id) {
    return new Promise(function (resolve) {
      window.addEventListener('message', function on(e) {
        if (e.origin !== BASE || !e.data || e.data.type !== type || (id !== undefined && e.data.id !== id)) return;
        window.removeEventListener('message', on);
        resolve(e.data);
      });
    });
  }
  function challenge(pk, url, clientSecret) {
    var cover = document.createElement('div');
    // Styles through the CSSOM: a style attribute would need 'unsafe-inline' in the merchant page's CSP.
    Object.assign(cover.style, { position: 'fixed', inset: '0', background: 'rgba(20,25,40,.55)', display: 'flex',
      alignItems: 'center', justifyContent: 'center', zIndex: '2147483647' });
    var frame = document.createElement('iframe');
    frame.name = 'stripe-challenge-frame';
    frame.title = '3-D Secure challenge';
    Object.assign(frame.style, { width: '420px', height: '300px', border: '0', borderRadius: '8px', background: '#fff' });
    frame.src = url + '?pk=' + encodeURIComponent(pk) + '&client_secret=' + encodeURIComponent(clientSecret) +
      '&origin=' + encodeURIComponent(location.origin);
    cover.appendChild(frame);
    document.body.appendChild(cover);
    return reply(frame, 'stripe-sim:3ds-done').then(function () { cover.remove(); });
  }
  function Stripe(pk) {
    if (!(this instanceof Stripe)) return new Stripe(pk);
    var frame = null;
    function cardPaymentMethod() {
      if (!frame) return Promise.resolve({ error: { type: 'validation_error', message: 'The card element is not mounted.' } });
      var id = ++seq;
      var p = reply(frame, 'stripe-sim:pm', id);
      frame.contentWindow.postMessage({ type: 'stripe-sim:create-pm', id: id }, BASE);
      return p.then(function (m) { return m.result; });
    }
    function confirm(kind, clientSecret, data) {
      var id = String(clientSecret).split('_secret_')[0];
      var path = '/v1/' + kind + 's/' + id;
      var pmField = data && data.payment_method;
      var pm = pmField && pmField.card ? cardPaymentMethod()
        : Promise.resolve(typeof pmField === 'string' ? { id: pmField } : null);
      var resultKey = kind === 'payment_intent' ? 'paymentIntent' : 'setupIntent';
      return pm.then(function (m) {
        if (m && m.error) return m;
        return api(pk, 'GET', path, { client_secret: clientSecret }).then(function (x) {
          if (x.error || x.status === 'requires_action') return x;
          return api(pk, 'POST', path + '/confirm', { client_secret: clientSecret, payment_method: m && m.id });
        });
      }).then(function (x) {
        if (x.error) return x;
        if (x.status !== 'requires_action') return x;
        return challenge(pk, x.next_action.redirect_to_url.url, clientSecret).then(function () {
          return api(pk, 'GET', path, { client_secret: clientSecret });
        });
      }).then(function (x) {
        if (x.error) return { error: x.error };
        if (x.status === 'succeeded' || x.status === 'processing') { var out = {}; out[resultKey] = x; return out; }
        var err = x.last_payment_error || x.last_setup_error ||
          { type: 'invalid_request_error', message: 'The payment was not completed (' + x.status + ').' };
        return { error: err };
      });
    }
    this.elements = function () {
      return { create: function (type) {
        if (type !== 'card') throw new Error('the simulator stand-in supports the card element only');
        return { mount: function (target) {
          var host = typeof target === 'string' ? document.querySelector(target) : target;
          frame = document.createElement('iframe');
          frame.name = 'stripe-card-element';
          frame.title = 'Secure card payment input frame';
          frame.src = BASE + '/elements/card?pk=' + encodeURIComponent(pk);
          host.appendChild(frame);
        } };
      } };
    };
    this.confirmCardSetup = function (cs, data) { return confirm('setup_intent', cs, data); };
    this.confirmCardPayment = function (cs, data) { return confirm('payment_intent', cs, data); };
  }
  window.Stripe = Stripe;
})();
`;
