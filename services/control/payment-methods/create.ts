import type { RouteDef } from '../../../shared/http/route.js';
import { bodyValidator, toFieldErrors } from '../../../shared/http/validation.js';
import { NotFoundError, PaymentRequiredError, ValidationError } from '../../../shared/errors.js';
import { deriveKey, hmacHex } from '../../../shared/secret.js';
import type { ApiDeps } from '../../../shared/http/route.js';
import type { PaymentProcessor } from '../payments/processor.js';
import { problemResponse } from '../billing/problem-docs.js';
import { checkCard, type ValidCard } from './card.js';
import { CreatePaymentMethodBody, PaymentMethodSchema } from './schemas.js';
import { insertPaymentMethod } from './store.js';

const validator = bodyValidator<unknown>(CreatePaymentMethodBody);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Shape errors from the schema plus the card rules, one error per field, never echoing card data. */
export function parseCreatePaymentMethod(body: unknown, now = new Date()): ValidCard {
  if (body === undefined) validator.parse(body); // throws "a JSON body is required"
  const schemaErrors = validator.check(body) ? [] : toFieldErrors(validator.check.errors);
  const reported = new Set(schemaErrors.map((e) => e.field));
  const semantic = isObject(body) && isObject(body.card) ? checkCard(body.card, now, 'card', reported) : { errors: [] };
  const errors = [...schemaErrors, ...semantic.errors.filter((e) => !reported.has(e.field))];
  if (errors.length || !('card' in semantic) || !semantic.card) throw new ValidationError(errors);
  return semantic.card;
}

export function createPaymentMethodRoute(deps: ApiDeps, processor: PaymentProcessor): RouteDef {
  // The fingerprint recognises the same card across accounts/additions without the number being recoverable.
  const fingerprintKey = deriveKey(deps.config.SECRET_KEY, 'card-fingerprint');
  return {
    method: 'POST',
    path: '/v1/billing/payment-methods',
    auth: 'write',
    handler: async (ctx) => {
      const card = parseCreatePaymentMethod(ctx.body);
      deps.protection.takeCardAttempt(ctx.principal!.accountId);
      const verdict = await processor.verifyCard({ number: card.number, exp_month: card.exp_month, exp_year: card.exp_year, cvc: card.cvc });
      if (!verdict.ok) throw new PaymentRequiredError(verdict.code, 'The card was declined by the processor; nothing was stored.');
      const pm = await insertPaymentMethod(deps.pg, ctx.principal!.accountId, {
        brand: card.brand,
        last4: card.last4,
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        fingerprint: hmacHex(fingerprintKey, card.number),
        processor: processor.name,
        processorToken: verdict.token,
      }, deps.protection.limits(ctx.principal!.accountId).max_payment_methods);
      if (!pm) throw new NotFoundError('The account no longer exists.');
      return { status: 201, body: pm, headers: { Location: `/v1/billing/payment-methods/${pm.id}` } };
    },
    doc: {
      summary: 'Add a card. The first one becomes the default. The number and CVC are checked with the processor and never stored.',
      tags: ['payment methods'],
      requestBody: CreatePaymentMethodBody,
      responses: {
        '201': { description: 'the stored payment method (brand, last four digits, expiry)', schema: PaymentMethodSchema },
        '402': problemResponse('the processor declined the card (`card_declined`); nothing was stored'),
      },
    },
  };
}
