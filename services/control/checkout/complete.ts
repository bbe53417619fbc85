import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { deriveKey } from '../../../shared/secret.js';
import { HostedCheckoutCompleteBody, HostedCheckoutDoneSchema } from '../../../shared/api/checkout.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { completeCheckout } from '../../domain/checkout/complete.js';
import { successRedirect } from '../../domain/checkout/links.js';
import { checkoutOrNotFound, openCheckout } from './access.js';
import { chargingFor } from '../hosted/access.js';
import { ValidationError } from '../../../shared/errors.js';
import { parseCheckoutComplete } from './input.js';

/**
 * POST /hosted/checkout/:session_id/:token/complete — the page's Subscribe: the card set up in the card element, the
 * promotion code typed; the subscription made once (services/domain/checkout/complete.ts). A double click, a refresh
 * or a second tab is answered the same redirect, nothing made twice.
 */
export function checkoutCompleteRoute(deps: ApiDeps, live: PaymentProcessor): RouteDef<HostedCheckoutCompleteBody> {
  const fingerprintKey = deriveKey(deps.config.SECRET_KEY, 'card-fingerprint');
  return {
    method: 'POST',
    path: '/hosted/checkout/:session_id/:token/complete',
    auth: 'public',
    input: parseCheckoutComplete,
    handler: async (ctx, body) => {
      const s = checkoutOrNotFound(await openCheckout(deps, ctx));
      if (s.status === 'complete') return reply.ok({ status: 'complete', redirect_url: successRedirect(s) });
      if (!s.account_id)
        throw new ValidationError([
          { field: 'payment_method', message: 'set up a card on this checkout’s page first' },
        ]);
      ctx.noteRateLimit(await deps.protection.takeCardAttempt(s.account_id));
      const { processor, now } = await chargingFor(deps, live, s.account_id);
      const done = await completeCheckout(deps.pg, {
        sessionId: s.id,
        paymentMethod: body.payment_method,
        promotionCode: body.promotion_code,
        processor,
        fingerprintKey,
        maxPaymentMethods: deps.protection.limits(s.account_id).max_payment_methods,
        thresholdMinimums: deps.config.BILLING_THRESHOLD_MINIMUMS,
        now,
      });
      return reply.ok({ status: 'complete', redirect_url: successRedirect(done) });
    },
    doc: {
      summary: 'The hosted checkout page subscribes: once, whatever the number of submits',
      tags: ['checkout'],
      requestBody: HostedCheckoutCompleteBody,
      responses: {
        '200': { description: 'complete: where to go on', schema: HostedCheckoutDoneSchema },
        '402': problemResponse('the processor declined the card; nothing was made'),
        '404': problemResponse('the link does not work'),
        '409': problemResponse(
          'expired (`checkout_session_expired`), or the promotion code refused (`promotion_code_expired`, `…_exhausted`, `…_inactive`, `…_first_time_only`)',
        ),
        '422': problemResponse('an unknown promotion code (`promotion_code_invalid`), or a bad field'),
      },
    },
  };
}
