import { pageMoney } from '../../domain/hosted-pages/invoice-view.js';
import type { PlanVersionRow } from '../../domain/plans/types.js';
import type { ProductRow } from '../../domain/products/types.js';
import type { CouponRow } from '../../domain/coupons/types.js';
import type { CheckoutSessionRow } from '../../domain/checkout/types.js';
import { esc } from '../hosted/templates.js';

/** What the checkout page shows: the plan's version, its products, the session's coupon, whether a card can be taken. */
export interface CheckoutView {
  session: CheckoutSessionRow;
  version: PlanVersionRow;
  products: Map<string, ProductRow>;
  coupon: CouponRow | null;
  email: string | null;
  stripeKey: string | null;
  seller: string;
}

const every = (v: PlanVersionRow) =>
  v.interval_count === 1 ? `per ${v.interval}` : `every ${v.interval_count} ${v.interval}s`;

function itemRows(v: CheckoutView): string {
  return v.version.items
    .map((i) => {
      const p = v.products.get(i.product_id);
      const price =
        p && p.pricing === 'flat'
          ? `${esc(pageMoney(p.price, p.currency))} ${esc(every(v.version))}${i.quantity > 1 ? ` × ${i.quantity}` : ''}`
          : 'billed by usage';
      return `<tr><td>${esc(p?.name ?? i.product_id)}</td><td class="num">${price}</td></tr>`;
    })
    .join('\n');
}

function discountNote(c: CouponRow | null): string {
  if (!c) return '';
  const off =
    c.percent_off !== null ? `${esc(c.percent_off)} % off` : `${esc(pageMoney(c.amount_off!, c.currency!))} off`;
  return `<p class="note" id="discount">Discount ${esc(c.name)}: ${off} (${esc(c.duration)}).</p>`;
}

/** The open checkout page: plan and price, the promotion code field if allowed, the card element, Subscribe, Cancel. */
export function checkoutPageBody(v: CheckoutView): string {
  const s = v.session;
  const trial = s.trial_days ?? v.version.trial_days;
  const form = v.stripeKey
    ? `${
        s.allow_promotion_codes
          ? `<p><label for="promotion-code">Promotion code</label>
<input id="promotion-code" name="promotion_code" autocomplete="off" maxlength="64"></p>`
          : ''
      }
<p><span id="card-label">Card</span></p>
<div id="card-element" class="card-element" aria-labelledby="card-label"></div>
<button type="button" id="subscribe">Subscribe</button>`
    : '<p class="note" id="no-card-entry">This deployment takes no card on this page.</p>';
  return `<h1>${esc(v.seller || 'Checkout')}</h1>
<section class="pay checkout" id="checkout" data-stripe-key="${esc(v.stripeKey ?? '')}">
<h2>Subscribe to <span id="plan-name">${esc(v.version.name)}</span></h2>
${v.email ? `<p>For <span id="customer-email">${esc(v.email)}</span></p>` : ''}
<table class="lines" id="plan-items"><thead><tr><th scope="col">Product</th><th scope="col" class="num">Price</th></tr></thead>
<tbody>
${itemRows(v)}
</tbody></table>
${trial > 0 ? `<p class="note" id="trial">Free for ${trial} days; the first invoice comes after the trial.</p>` : ''}
${discountNote(v.coupon)}
<p class="message" id="pay-message" role="status" aria-live="polite"></p>
${form}
<p class="note">Your card is charged by the first invoice of this subscription. Its number goes to the payment processor only.</p>
<p><a id="cancel" href="${esc(s.cancel_url)}">Cancel and go back</a></p>
</section>`;
}

/** A completed session's page (a refresh after subscribing): where to go on. */
export function checkoutDoneBody(redirect: string): string {
  return `<h1>You are subscribed</h1>
<p class="paid-note" id="checkout-complete">This checkout is complete.</p>
<p><a id="continue" href="${esc(redirect)}">Continue</a></p>`;
}

/** An expired session's page. */
export function checkoutExpiredBody(cancelUrl: string): string {
  return `<h1>This checkout expired</h1>
<p class="refused" id="link-refused">Nothing was charged. Ask the sender for a new link.</p>
<p><a id="cancel" href="${esc(cancelUrl)}">Go back</a></p>`;
}
