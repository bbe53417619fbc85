/**
 * What the hosted invoice page offers besides the document itself (docs/payments.md "Hosted pages"): while the
 * invoice is open or uncollectible, a Pay form — with the saved default card, or a new card entered in the
 * processor's card element when the processor takes cards in the browser. The form names the attempt it makes, so a
 * double click or a refreshed form is that same attempt, never a second charge (billing/payments.ts
 * attemptPaymentNow). When the last attempt waits for 3-D Secure, the form completes that one instead.
 */
export interface PayPanel {
  payable: boolean;
  savedCard: { brand: string; last4: string } | null;
  /** The attempt number "Pay with the saved card" makes (or completes, when it waits for the customer). */
  attempt: number;
  /** The attempt number a new card's payment makes (always a new attempt). */
  newCardAttempt: number;
  /** The last attempt waits for the customer's 3-D Secure challenge. */
  awaitingAuthentication: boolean;
  /** The processor takes a new card in the browser (Stripe with a publishable key). */
  newCard: boolean;
}

/** Whether an invoice in this status can be paid on its page. */
export const payableStatus = (status: string) => status === 'open' || status === 'uncollectible';

export function payPanel(
  invoice: { status: string; attempt_count: number },
  pm: { brand: string; last4: string } | null,
  waiting: { attempt: number } | null,
  newCardInBrowser: boolean,
): PayPanel {
  const payable = payableStatus(invoice.status);
  return {
    payable,
    savedCard: pm ? { brand: pm.brand, last4: pm.last4 } : null,
    attempt: waiting ? waiting.attempt : invoice.attempt_count + 1,
    newCardAttempt: invoice.attempt_count + 1,
    awaitingAuthentication: waiting !== null,
    newCard: payable && newCardInBrowser,
  };
}
