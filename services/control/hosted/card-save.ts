import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { deriveKey } from '../../../shared/secret.js';
import { HostedSaveCardBody } from '../../../shared/api/hosted-pages.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { saveProcessorCard } from '../../domain/payment-methods/save.js';
import { chargingFor, openCardPage, orNotFound } from './access.js';
import { parseHostedSaveCard } from './input.js';

/**
 * POST /hosted/cards/:token/payment-method — the card the customer set up in Stripe's card element (a `pm_…` id,
 * never a number) saved as its default payment method, by the same rule as POST /v1/billing/payment-methods.
 */
export function hostedSaveCardRoute(deps: ApiDeps, live: PaymentProcessor): RouteDef<HostedSaveCardBody> {
  const fingerprintKey = deriveKey(deps.config.SECRET_KEY, 'card-fingerprint');
  return {
    method: 'POST',
    path: '/hosted/cards/:token/payment-method',
    auth: 'public',
    input: parseHostedSaveCard,
    handler: async (ctx, body) => {
      const { accountId } = orNotFound(await openCardPage(deps, ctx));
      ctx.noteRateLimit(await deps.protection.takeCardAttempt(accountId));
      const { processor } = await chargingFor(deps, live, accountId);
      const row = await saveProcessorCard(deps.pg, {
        processor,
        fingerprintKey,
        accountId,
        token: body.payment_method,
        maxPaymentMethods: deps.protection.limits(accountId).max_payment_methods,
        makeDefault: true,
      });
      return reply.ok({ status: 'saved', card: { brand: row.brand, last4: row.last4 } });
    },
    doc: {
      summary: 'The hosted card page saves the card set up in the card element as the default',
      tags: ['hosted pages'],
      requestBody: HostedSaveCardBody,
      responses: {
        '200': { description: '{status: "saved", card: {brand, last4}}' },
        '402': problemResponse('the processor declined the card; nothing was stored'),
        '404': problemResponse('the link does not work, or the processor has no such payment method'),
      },
    },
  };
}
