import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createPaymentProcessor } from '../../domain/payments/create.js';
import { CustomerRegistryWriter } from '../../domain/customers/registry-writer.js';
import { checkoutCompleteRoute } from './complete.js';
import { createCheckoutSessionRoute } from './create.js';
import { getCheckoutSessionRoute } from './get.js';
import { checkoutPageRoute } from './page.js';
import { checkoutScriptRoute } from './script.js';
import { checkoutSetupIntentRoute } from './setup-intent.js';

/**
 * Checkout (docs/checkout.md): /v1/checkout_sessions (admin) and the hosted checkout page with the JSON its script
 * posts. It writes customers made from customer_email to the customer registry, so it opens a registry writer.
 */
export const checkoutModule: RouteModuleFactory = (deps) => {
  const processor = createPaymentProcessor(deps.pg, deps.config);
  let registry: CustomerRegistryWriter | undefined;
  const get = () => {
    if (!registry) throw new Error('checkout module not started');
    return registry;
  };
  return {
    name: 'checkout',
    area: 'control',
    async start() {
      registry = await CustomerRegistryWriter.open(deps.nats, deps.natsNames.customerBucket, deps.log);
    },
    register(server) {
      server.route(createCheckoutSessionRoute(deps));
      server.route(getCheckoutSessionRoute(deps));
      server.route(checkoutScriptRoute());
      server.route(checkoutPageRoute(deps, processor));
      server.route(checkoutSetupIntentRoute(deps, processor, get));
      server.route(checkoutCompleteRoute(deps, processor));
    },
  };
};
