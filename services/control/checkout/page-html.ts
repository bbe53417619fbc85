import { invoiceTexts, type Locale } from '../../domain/invoices/invoice-texts.js';
import { CHECKOUT_LABELS, type CheckoutLabels } from '../../domain/checkout/checkout-texts.js';
import { DECLINE_LABELS } from '../../domain/payments/decline-texts.js';
import type { PlanVersionRow } from '../../domain/plans/types.js';
import type { ProductRow } from '../../domain/products/types.js';
import type { CouponRow } from '../../domain/coupons/types.js';
import type { CheckoutSessionRow } from '../../domain/checkout/types.js';
import { esc, escWith } from '../hosted/templates.js';

/**
 * What the checkout page shows: the plan's version, its products, the session's coupon, whether a card can be taken,
 * in `locale` (services/domain/checkout/checkout-texts.ts; amounts formatted by invoiceTexts).
 */
export interface CheckoutView {
  session: CheckoutSessionRow;
  version: PlanVersionRow;
  products: Map<string, ProductRow>;
  coupon: CouponRow | null;
  email: string | null;
  stripeKey: string | null;
  seller: string;
  locale: Locale;
}

const every = (v: PlanVersionRow, l: CheckoutLabels) =>
  v.interval_count === 1 ? l.per[v.interval] : l.every[v.interval](String(v.interval_count));

function itemRows(v: CheckoutView, l: CheckoutLabels): string {
  const t = invoiceTexts(v.locale);
  return v.version.items
    .map((i) => {
      const p = v.products.get(i.product_id);
      const price =
        p && p.pricing === 'flat'
          ? `${esc(t.money(p.price, p.currency))} ${esc(every(v.version, l))}${i.quantity > 1 ? ` × ${i.quantity}` : ''}`
          : esc(l.billedByUsage);
      return `<tr><td>${esc(p?.name ?? i.product_id)}</td><td class="num">${price}</td></tr>`;
    })
    .join('\n');
}

function discountNote(c: CouponRow | null, locale: Locale): string {
  if (!c) return '';
  const l = CHECKOUT_LABELS[locale];
  const off =
    c.percent_off !== null
      ? l.percentOff(String(c.percent_off))
      : l.amountOff(invoiceTexts(locale).money(c.amount_off!, c.currency!));
  return `<p class="note" id="discount">${esc(l.discount(c.name, off, l.durations[c.duration] ?? c.duration))}</p>`;
}

/** The script's messages in the page's language, with a refused card's reasons, as an escaped JSON attribute. */
const scriptTexts = (locale: Locale) =>
  esc(JSON.stringify({ ...CHECKOUT_LABELS[locale].script, declines: DECLINE_LABELS[locale] }));

/** The open checkout page: plan and price, the promotion code field if allowed, the card element, Subscribe, Cancel. */
export function checkoutPageBody(v: CheckoutView): string {
  const s = v.session;
  const l = CHECKOUT_LABELS[v.locale];
  const trial = s.trial_days ?? v.version.trial_days;
  const form = v.stripeKey
    ? `${
        s.allow_promotion_codes
          ? `<p><label for="promotion-code">${esc(l.promotionCode)}</label>
<input id="promotion-code" name="promotion_code" autocomplete="off" maxlength="64"></p>`
          : ''
      }
<p><span id="card-label">${esc(l.card)}</span></p>
<div id="card-element" class="card-element" aria-labelledby="card-label"></div>
<button type="button" id="subscribe">${esc(l.subscribe)}</button>`
    : `<p class="note" id="no-card-entry">${esc(l.noCardEntry)}</p>`;
  return `<h1>${esc(v.seller || l.checkout)}</h1>
<section class="pay checkout" id="checkout" data-stripe-key="${esc(v.stripeKey ?? '')}" data-texts="${scriptTexts(v.locale)}">
<h2>${escWith(l.subscribeTo, `<span id="plan-name">${esc(v.version.name)}</span>`)}</h2>
${v.email ? `<p>${escWith(l.forEmail, `<span id="customer-email">${esc(v.email)}</span>`)}</p>` : ''}
<table class="lines" id="plan-items"><thead><tr><th scope="col">${esc(l.product)}</th><th scope="col" class="num">${esc(l.price)}</th></tr></thead>
<tbody>
${itemRows(v, l)}
</tbody></table>
${trial > 0 ? `<p class="note" id="trial">${esc(l.trial(String(trial)))}</p>` : ''}
${discountNote(v.coupon, v.locale)}
<p class="message" id="pay-message" role="status" aria-live="polite"></p>
${form}
<p class="note">${esc(l.chargeNote)}</p>
<p><a id="cancel" href="${esc(s.cancel_url)}">${esc(l.cancel)}</a></p>
</section>`;
}

/** A completed session's page (a refresh after subscribing): where to go on. */
export function checkoutDoneBody(redirect: string, locale: Locale): string {
  const l = CHECKOUT_LABELS[locale];
  return `<h1>${esc(l.doneTitle)}</h1>
<p class="paid-note" id="checkout-complete">${esc(l.complete)}</p>
<p><a id="continue" href="${esc(redirect)}">${esc(l.continue)}</a></p>`;
}

/** An expired session's page. */
export function checkoutExpiredBody(cancelUrl: string, locale: Locale): string {
  const l = CHECKOUT_LABELS[locale];
  return `<h1>${esc(l.expiredTitle)}</h1>
<p class="refused" id="link-refused">${esc(l.expired)}</p>
<p><a id="cancel" href="${esc(cancelUrl)}">${esc(l.goBack)}</a></p>`;
}
