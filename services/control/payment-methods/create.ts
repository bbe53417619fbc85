import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { PaymentRequiredError, ValidationError } from '../../../shared/errors.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { reply } from '../../../shared/http/reply.js';
import { deriveKey, hmacHex } from '../../../shared/secret.js';
import type { PaymentProcessor } from '../../domain/payments/processor.js';
import { processorFor } from '../../domain/payments/create.js';
import { accountTime } from '../../domain/test-clocks/store.js';
import { parseNewPaymentMethod, type NewPaymentMethod } from './input.js';
import { CreatePaymentMethodBody, PaymentMethodSchema } from '../../../shared/api/payment-methods.js';
import { toPaymentMethod } from './representation.js';
import { insertPaymentMethod } from '../../domain/payment-methods/store.js';
import { saveProcessorCard } from '../../domain/payment-methods/save.js';
import type { NewCard } from '../../domain/payment-methods/types.js';

/**
 * POST /v1/billing/payment-methods — raw card details are verified with a processor that takes them (the sandbox);
 * a processor's token (`pm_…`) is saved with that processor (Stripe: a SetupIntent). Nothing is stored on a decline.
 */
export function createPaymentMethodRoute(deps: ApiDeps, processor: PaymentProcessor): RouteDef<NewPaymentMethod> {
  // The fingerprint recognises the same card across accounts/additions without the number being recoverable.
  const fingerprintKey = deriveKey(deps.config.SECRET_KEY, 'card-fingerprint');
  return {
    method: 'POST',
    path: '/v1/billing/payment-methods',
    auth: 'write',
    input: (ctx) => parseNewPaymentMethod(ctx.body),
    handler: async (ctx, input) => {
      const accountId = ctx.principal!.accountId;
      ctx.noteRateLimit(await deps.protection.takeCardAttempt(accountId));
      // A customer on a test clock gets sandbox cards only: its charges never reach a live processor.
      const { clockId } = await accountTime(deps.pg, accountId);
      const verifier = processorFor(deps.pg, processor, clockId);
      let token = input.kind === 'token' ? input.token : null;
      if (input.kind === 'card' && verifier.acceptsRawCards !== false && verifier.tokenizeCard) {
        // Forwarded to the processor (Stripe's opt-in for operators with their own PCI attestation), then saved.
        const made = await verifier.tokenizeCard(input.card);
        if (!made.ok) throw new PaymentRequiredError(made.code, `${made.message} Nothing was stored.`);
        token = made.token;
      }
      if (token === null && input.kind === 'card') {
        if (verifier.acceptsRawCards === false)
          throw new ValidationError(
            [{ field: 'card', message: `raw card details are refused by the ${verifier.name} processor` }],
            `This deployment charges cards through ${verifier.name}: card numbers never reach meterline. Enter the card on the hosted card page (Stripe's card element) and send its PaymentMethod id as payment_method (docs/payments.md).`,
            'raw_card_refused',
          );
        const c = input.card;
        const verdict = await verifier.verifyCard({
          number: c.number,
          exp_month: c.exp_month,
          exp_year: c.exp_year,
          cvc: c.cvc,
        });
        if (!verdict.ok)
          throw new PaymentRequiredError(verdict.code, 'The card was declined by the processor; nothing was stored.');
        const card: NewCard = {
          brand: c.brand,
          last4: c.last4,
          exp_month: c.exp_month,
          exp_year: c.exp_year,
          fingerprint: hmacHex(fingerprintKey, c.number),
          processor: verifier.name,
          processorToken: verdict.token,
        };
        const row = await insertPaymentMethod(
          deps.pg,
          accountId,
          card,
          deps.protection.limits(accountId).max_payment_methods,
        );
        return reply.created(toPaymentMethod(row), `/v1/billing/payment-methods/${row.id}`);
      }
      const row = await saveProcessorCard(deps.pg, {
        processor: verifier,
        fingerprintKey,
        accountId,
        token: token!,
        maxPaymentMethods: deps.protection.limits(accountId).max_payment_methods,
      });
      return reply.created(toPaymentMethod(row), `/v1/billing/payment-methods/${row.id}`);
    },
    doc: {
      summary:
        "Add a card: raw details (sandbox; the number and CVC are checked and never stored) or a Stripe PaymentMethod id from Stripe's card element (PAYMENT_PROCESSOR=stripe). The first one becomes the default.",
      tags: ['payment methods'],
      requestBody: CreatePaymentMethodBody,
      responses: {
        '201': {
          description: 'the stored payment method (brand, last four digits, expiry)',
          schema: PaymentMethodSchema,
        },
        '402': problemResponse(
          'the processor declined the card (`card_declined`, `authentication_required`…); nothing was stored',
        ),
        '422': problemResponse(
          'invalid card details; or raw details under Stripe (`raw_card_refused`), a token under the sandbox (`payment_method_unsupported`)',
        ),
      },
    },
  };
}
