/**
 * The one rule, in the browser, for what a customer reads when a card is refused (the hosted invoice and card pages'
 * pay.js and the checkout page's checkout.js include it): the page's own text for the processor's decline code,
 * else for its error code (services/domain/payments/decline-texts.ts, given to the script in its data-texts),
 * else null — the caller then says the generic `declined` (a card error) or passes another kind of message on. The
 * same lookup by code picks a page's other texts of a JSON answer (an open payment's reason, a checkout refusal).
 * `e` is a Stripe.js error, a failed payment's answer, or a problem's body: each has `code`, a decline `decline_code`.
 */
export const REFUSAL_FUNCTION = `function refusal(table, e) {
    var has = function (k) { return typeof k === 'string' && Object.prototype.hasOwnProperty.call(table, k); };
    if (!e) return null;
    if (has(e.decline_code)) return table[e.decline_code];
    if (has(e.code)) return table[e.code];
    return null;
  }
  function stripeError(declines, e) {
    return refusal(declines, e) || (e.type === 'card_error' ? declines.declined : e.message);
  }`;
