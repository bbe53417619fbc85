import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createPaymentProcessor } from '../../domain/payments/create.js';
import { createPaymentMethodRoute } from './create.js';
import { listPaymentMethodsRoute } from './list.js';
import { getPaymentMethodRoute } from './get.js';
import { setDefaultPaymentMethodRoute } from './set-default.js';

/** /v1/billing/payment-methods: add cards (verified with the processor), list them, pick the default. */
export const paymentMethodsModule: RouteModuleFactory = (deps) => {
  const processor = createPaymentProcessor(deps.pg, deps.config);
  return {
    name: 'payment-methods',
    area: 'control',
    register(server) {
      server.route(createPaymentMethodRoute(deps, processor));
      server.route(listPaymentMethodsRoute(deps));
      server.route(getPaymentMethodRoute(deps));
      server.route(setDefaultPaymentMethodRoute(deps));
    },
  };
};
