import { FAILURE_MESSAGES, type FailureCode, type PaymentOutcome } from '../../domain/billing/payment-outcomes.js';
import { attemptAwaitingCustomer, type PaymentDeps } from '../../domain/billing/payments.js';

/** Why an attempt is still open: its code picks the page's text (page-texts.ts `script.open`); `message` is English. */
export type OpenReason = 'payment_pending' | 'authentication_unavailable' | 'authentication_incomplete';

/** What the page's script is told of an attempt (shared/api/hosted-pages.ts HostedPaymentSchema). */
export type HostedPayment =
  | { status: 'paid' }
  | { status: 'open'; code: OpenReason; message: string }
  | { status: 'failed'; code: string; message: string; next_attempt: number }
  | { status: 'requires_action'; client_secret: string; payment_method: string | null };

export async function answerOf(deps: PaymentDeps, outcome: PaymentOutcome): Promise<HostedPayment> {
  if (outcome.outcome === 'succeeded') return { status: 'paid' };
  if (outcome.outcome === 'failed') {
    const code = outcome.failure_code ?? 'card_declined';
    return {
      status: 'failed',
      code,
      message: `${FAILURE_MESSAGES[code as FailureCode] ?? 'The payment failed.'} Nothing was charged.`,
      next_attempt: outcome.attempt + 1,
    };
  }
  // requires_action: the browser runs the bank's challenge for that payment (Stripe.js confirmCardPayment).
  const waiting = await attemptAwaitingCustomer(deps.pg, outcome.invoice_id);
  if (!waiting || !deps.processor.paymentInBrowser)
    return {
      status: 'open',
      code: 'authentication_unavailable',
      message: 'The bank asks for authentication, which this page cannot run.',
    };
  const p = await deps.processor.paymentInBrowser(waiting.payment_id);
  return { status: 'requires_action', client_secret: p.clientSecret, payment_method: p.paymentMethod };
}
