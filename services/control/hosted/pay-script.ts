import { PAGE_LABELS } from '../../domain/hosted-pages/page-texts.js';
import { DECLINE_LABELS } from '../../domain/payments/decline-texts.js';
import { REFUSAL_FUNCTION } from './decline-script.js';

/**
 * The hosted pages' one script (served as /hosted/assets/pay.js; the CSP allows no inline script). It talks to
 * Stripe.js only through the calls production Stripe.js has — Stripe(pk), elements().create('card'), mount,
 * confirmCardSetup, confirmCardPayment — so the same code runs against Stripe and the simulator's stand-in. The card
 * number stays inside Stripe's card element: this script only ever sees pm_/seti_/pi_ ids and client secrets.
 * Its messages come in the page's language from the root's data-texts attribute (services/domain/hosted-pages/
 * page-texts.ts `script`, and `declines`: a refused card's reason by its code, decline-script.ts); without one (a
 * cached page of an older version) they are English. Stripe.js is asked for the page's language too (`lang`).
 */
export const PAY_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('pay') || document.getElementById('card');
  if (!root) return;
  var message = document.getElementById('pay-message');
  var buttons = Array.prototype.slice.call(root.querySelectorAll('button'));
  var key = root.getAttribute('data-stripe-key');
  var texts = ${JSON.stringify({ ...PAGE_LABELS.en.script, declines: DECLINE_LABELS.en })};
  try {
    var given = JSON.parse(root.getAttribute('data-texts') || '{}');
    Object.keys(texts).forEach(function (k) { if (typeof given[k] === typeof texts[k]) texts[k] = given[k]; });
  } catch (e) { /* English */ }
  function say(name, slot, value) { return texts[name].replace('{' + slot + '}', value); }
  ${REFUSAL_FUNCTION}
  var stripe = key && window.Stripe ? window.Stripe(key, { locale: document.documentElement.lang || 'auto' }) : null;
  var card = null;
  if (stripe && document.getElementById('card-element')) {
    card = stripe.elements().create('card');
    card.mount('#card-element');
  }
  function show(text, kind) {
    message.textContent = text;
    message.className = 'message ' + kind;
  }
  function busy(on) {
    buttons.forEach(function (b) { b.disabled = on; });
  }
  function post(path, body) {
    return fetch(location.pathname + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      credentials: 'omit',
      body: JSON.stringify(body || {}),
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (j) { return { status: r.status, body: j }; });
    });
  }
  function problem(r) {
    return refusal(texts.declines, r.body) || (r.body && (r.body.detail || r.body.message)) || say('failedStatus', 'status', String(r.status));
  }
  function done(r) {
    if (r.status >= 400) { show(problem(r), 'error'); busy(false); return; }
    var b = r.body;
    if (b.status === 'paid') { show(texts.paid, 'ok'); location.reload(); return; }
    if (b.status === 'failed') {
      show((refusal(texts.declines, b) || texts.declines.declined) + ' ' + texts.nothingCharged, 'error');
      // A retry is a new, deliberate attempt.
      buttons.forEach(function (x) { if (x.hasAttribute('data-attempt')) x.setAttribute('data-attempt', String(b.next_attempt)); });
      busy(false);
      return;
    }
    show(refusal(texts.open, b) || b.shown || texts.notComplete, 'error');
    busy(false);
  }
  function authenticate(r) {
    if (r.status >= 400 || r.body.status !== 'requires_action') return r;
    if (!stripe) return { status: 200, body: { status: 'open', shown: texts.authenticate } };
    show(texts.confirming, 'info');
    var opts = r.body.payment_method ? { payment_method: r.body.payment_method } : {};
    return stripe.confirmCardPayment(r.body.client_secret, opts).then(function (res) {
      if (res.error) show(stripeError(texts.declines, res.error), 'error');
      return post('/confirm');
    });
  }
  function pay(attempt, paymentMethod) {
    var body = { attempt: Number(attempt) };
    if (paymentMethod) body.payment_method = paymentMethod;
    show(texts.paying, 'info');
    return post('/pay', body).then(authenticate).then(done);
  }
  /** A new card: a SetupIntent confirmed by Stripe.js with the card element (3-D Secure there if the bank asks). */
  function setUpCard() {
    return post('/setup-intent').then(function (r) {
      if (r.status >= 400) throw new Error(problem(r));
      return stripe.confirmCardSetup(r.body.client_secret, { payment_method: { card: card } });
    }).then(function (res) {
      if (res.error) throw new Error(stripeError(texts.declines, res.error));
      return typeof res.setupIntent.payment_method === 'string' ? res.setupIntent.payment_method : res.setupIntent.payment_method.id;
    });
  }
  function failed(e) { show(e.message, 'error'); busy(false); }
  var saved = document.getElementById('pay-saved');
  if (saved) saved.addEventListener('click', function () {
    busy(true);
    pay(saved.getAttribute('data-attempt')).catch(failed);
  });
  var fresh = document.getElementById('pay-new');
  if (fresh) fresh.addEventListener('click', function () {
    busy(true);
    show(texts.checkingCard, 'info');
    setUpCard().then(function (pm) { return pay(fresh.getAttribute('data-attempt'), pm); }).catch(failed);
  });
  var save = document.getElementById('save-card');
  if (save) save.addEventListener('click', function () {
    busy(true);
    show(texts.checkingCard, 'info');
    setUpCard().then(function (pm) { return post('/payment-method', { payment_method: pm }); }).then(function (r) {
      if (r.status >= 400) throw new Error(problem(r));
      var card = r.body.card.brand + ' •••• ' + r.body.card.last4;
      show(say('saved', 'card', card), 'ok');
      document.getElementById('current-card').textContent = say('defaultCard', 'card', card);
      busy(false);
    }).catch(failed);
  });
})();
`;

export const HOSTED_CSS = `body{font:15px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:46rem;margin:2rem auto;background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}h3{font-size:1rem;margin:1rem 0 .4rem}
p{margin:.2rem 0}.doc-head{display:flex;justify-content:space-between;gap:2rem;flex-wrap:wrap}.meta{text-align:right}
.status{display:inline-block;padding:.1rem .6rem;border-radius:1rem;font-weight:600;background:#e7eaf0}
.status.paid{background:#dcf5e3;color:#17603a}.status.open{background:#e3ecff;color:#21458f}
.status.uncollectible,.status.void{background:#fde8e8;color:#8a1c1c}
table.lines{width:100%;border-collapse:collapse;margin-top:1.2rem}th,td{padding:.45rem .3rem;border-bottom:1px solid #e3e6ec;text-align:left;vertical-align:top}
.num{text-align:right;white-space:nowrap}.detail{color:#667;font-size:.85rem}
dl.totals{display:grid;grid-template-columns:1fr auto;gap:.2rem 1.5rem;margin:1rem 0 0 auto;max-width:22rem}
dl.totals dt{color:#445}dl.totals dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
#amount-due{font-weight:700}.pdf{margin-top:1rem}.paid-note{margin-top:1rem;color:#17603a;font-weight:600}
.pay{margin-top:1.5rem;padding-top:.5rem;border-top:2px solid #e3e6ec}
button{padding:.6rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #2b5bd7;background:#2b5bd7;color:#fff;cursor:pointer;margin:.4rem 0}
button:disabled{opacity:.55;cursor:wait}.card-element{min-height:3rem;margin:.4rem 0}.card-element iframe{width:100%;border:0;height:3.2rem}
.note{color:#556;font-size:.88rem}.message{min-height:1.4rem;font-weight:600}.message.error{color:#a11d1d}.message.ok{color:#17603a}.message.info{color:#334}
.refused{color:#8a1c1c}`;
