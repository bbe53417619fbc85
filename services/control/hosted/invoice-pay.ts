import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ConflictError, PaymentRequiredError } from '../../../shared/errors.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { HostedPayBody, HostedPaymentSchema } from '../../../shared/api/hosted-pages.js';
import { deriveKey } from '../../../shared/secret.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { attemptPaymentNow } from '../../domain/billing/payments.js';
import { saveProcessorCard } from '../../domain/payment-methods/save.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { chargingFor, openInvoice, orNotFound } from './access.js';
import { parseHostedPay } from './input.js';
import { answerOf } from './payment-answer.js';

/**
 * POST /hosted/invoices/:invoice_id/:token/pay — the page's Pay button: one payment attempt through the billing
 * engine's attempt path (recorded before the charge, one off-session PaymentIntent keyed by the attempt). With
 * `payment_method` (a card the customer just set up in Stripe's card element) that card is saved as the default
 * first. `attempt` makes a double click or a refreshed form the same attempt, never a second charge.
 */
export function hostedPayRoute(deps: ApiDeps, live: PaymentProcessor): RouteDef<HostedPayBody> {
  const fingerprintKey = deriveKey(deps.config.SECRET_KEY, 'card-fingerprint');
  const links = { key: hostedKey(deps.config.SECRET_KEY), baseUrl: deps.config.PUBLIC_BASE_URL };
  return {
    method: 'POST',
    path: '/hosted/invoices/:invoice_id/:token/pay',
    auth: 'public',
    input: parseHostedPay,
    handler: async (ctx, body) => {
      const { accountId, invoice } = orNotFound(await openInvoice(deps, ctx));
      // A new card counts against the account's card attempts (card testing), as POST /v1/billing/payment-methods.
      if (body.payment_method) ctx.noteRateLimit(await deps.protection.takeCardAttempt(accountId));
      const { now, processor } = await chargingFor(deps, live, accountId);
      const payDeps = { pg: deps.pg, processor, log: deps.log, hostedLinks: links };
      try {
        if (body.payment_method)
          await saveProcessorCard(deps.pg, {
            processor,
            fingerprintKey,
            accountId,
            token: body.payment_method,
            maxPaymentMethods: deps.protection.limits(accountId).max_payment_methods,
            makeDefault: true,
          });
        const outcome = await attemptPaymentNow(payDeps, accountId, invoice.invoice.id, now, {
          attempt: body.attempt,
        });
        return reply.ok(await answerOf(payDeps, outcome));
      } catch (e) {
        if (e instanceof ConflictError && e.code === 'invoice_paid') return reply.ok({ status: 'paid' });
        if (e instanceof ConflictError && e.code === 'invoice_payment_pending')
          return reply.ok({
            status: 'open',
            code: 'payment_pending',
            message: 'A payment of this invoice is in progress. Reload in a moment.',
          });
        // A new card the processor refused: its reason, nothing stored or charged.
        if (e instanceof PaymentRequiredError && body.payment_method)
          return reply.ok({ status: 'failed', code: e.code, message: e.message, next_attempt: body.attempt });
        throw e;
      }
    },
    doc: {
      summary:
        'The hosted invoice page pays: one attempt with the default card (or a card just set up in the card element); the same attempt number never charges twice',
      tags: ['hosted pages'],
      requestBody: HostedPayBody,
      responses: {
        '200': { description: 'paid, failed (why), or requires_action (3-D Secure)', schema: HostedPaymentSchema },
        '402': problemResponse('no card on file (`no_payment_method`)'),
        '404': problemResponse('the link does not work'),
        '409': problemResponse('the invoice is void (`invoice_void`)'),
      },
    },
  };
}
