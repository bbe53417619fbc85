import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { stripeFromConfig } from '../../domain/payments/create.js';
import { stripeWebhookRoute } from './stripe-webhook.js';

/** /v1/processors/…: what payment processors call back; served only for the deployment's processor (Stripe). */
export const processorsModule: RouteModuleFactory = (deps) => {
  const c = deps.config;
  return {
    name: 'processors',
    area: 'control',
    register(server) {
      if (c.PAYMENT_PROCESSOR !== 'stripe') return;
      server.route(
        stripeWebhookRoute(deps, stripeFromConfig(c), c.STRIPE_WEBHOOK_SECRET_FILE || c.STRIPE_WEBHOOK_SECRET),
      );
    },
  };
};
