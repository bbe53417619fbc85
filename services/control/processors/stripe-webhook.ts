import type Stripe from 'stripe';
import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { BadRequestError } from '../../../shared/errors.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { reply } from '../../../shared/http/reply.js';
import { applyStripeEvent } from '../../domain/billing/stripe-events.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';

/**
 * POST /v1/processors/stripe/webhook — the endpoint to register with Stripe (docs/payments.md). Public: Stripe signs
 * each delivery (`Stripe-Signature`, verified by the SDK over the raw body with STRIPE_WEBHOOK_SECRET); a delivery
 * that fails verification is refused (400) and changes nothing. 200 once the event is applied (or was before).
 */
export function stripeWebhookRoute(deps: ApiDeps, stripe: Stripe, secret: string): RouteDef {
  const links = { key: hostedKey(deps.config.SECRET_KEY), baseUrl: deps.config.PUBLIC_BASE_URL };
  return {
    method: 'POST',
    path: '/v1/processors/stripe/webhook',
    auth: 'public',
    idempotent: false,
    handler: async (ctx) => {
      const signature = ctx.headers['stripe-signature'];
      if (!signature || !ctx.rawBody)
        throw new BadRequestError('A Stripe-Signature header and the event body are required.', 'invalid_signature');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(ctx.rawBody, signature, secret);
      } catch (e) {
        throw new BadRequestError(`The Stripe signature does not verify: ${(e as Error).message}`, 'invalid_signature');
      }
      const outcome = await applyStripeEvent(deps.pg, event, new Date(), links);
      return reply.ok({ received: true, id: event.id, outcome });
    },
    doc: {
      summary:
        "Stripe's webhook events in (PAYMENT_PROCESSOR=stripe only): payment_intent.*, setup_intent.succeeded, charge.refunded, charge.dispute.*; applied once per event id, in any order",
      tags: ['payments'],
      responses: {
        '200': { description: '{received: true, id, outcome: applied | duplicate | ignored}' },
        '400': problemResponse('the Stripe-Signature does not verify (`invalid_signature`); nothing changed'),
      },
    },
  };
}
