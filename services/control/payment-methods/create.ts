import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { PaymentRequiredError } from '../../../shared/errors.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { reply } from '../../../shared/http/reply.js';
import { deriveKey, hmacHex } from '../../../shared/secret.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { processorFor } from '../../domain/payments/create.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import type { ValidCard } from '../../domain/payment-methods/card.js';
import { parseNewCard } from './input.js';
import { CreatePaymentMethodBody, PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { insertPaymentMethod } from '../../domain/payment-methods/store.js';

/** POST /v1/billing/payment-methods — the card is verified with the processor first; nothing is stored on a decline. */
export function createPaymentMethodRoute(deps: ApiDeps, processor: PaymentProcessor): RouteDef<ValidCard> {
  // The fingerprint recognises the same card across accounts/additions without the number being recoverable.
  const fingerprintKey = deriveKey(deps.config.SECRET_KEY, 'card-fingerprint');
  return {
    method: 'POST',
    path: '/v1/billing/payment-methods',
    auth: 'write',
    input: (ctx) => parseNewCard(ctx.body),
    handler: async (ctx, card) => {
      ctx.noteRateLimit(await deps.protection.takeCardAttempt(ctx.principal!.accountId));
      // A customer on a test clock gets sandbox cards only: its charges never reach a live processor.
      const { clockId } = await accountTime(deps.pg, ctx.principal!.accountId);
      const verifier = processorFor(deps.pg, processor, clockId);
      const verdict = await verifier.verifyCard({
        number: card.number,
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        cvc: card.cvc,
      });
      if (!verdict.ok)
        throw new PaymentRequiredError(verdict.code, 'The card was declined by the processor; nothing was stored.');
      const row = await insertPaymentMethod(
        deps.pg,
        ctx.principal!.accountId,
        {
          brand: card.brand,
          last4: card.last4,
          exp_month: card.exp_month,
          exp_year: card.exp_year,
          fingerprint: hmacHex(fingerprintKey, card.number),
          processor: verifier.name,
          processorToken: verdict.token,
        },
        deps.protection.limits(ctx.principal!.accountId).max_payment_methods,
      );
      return reply.created(toPaymentMethod(row), `/v1/billing/payment-methods/${row.id}`);
    },
    doc: {
      summary:
        'Add a card. The first one becomes the default. The number and CVC are checked with the processor and never stored.',
      tags: ['payment methods'],
      requestBody: CreatePaymentMethodBody,
      responses: {
        '201': {
          description: 'the stored payment method (brand, last four digits, expiry)',
          schema: PaymentMethodSchema,
        },
        '402': problemResponse('the processor declined the card (`card_declined`); nothing was stored'),
      },
    },
  };
}
