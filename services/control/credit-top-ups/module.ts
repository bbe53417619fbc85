import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { createPaymentProcessor } from '../../domain/payments/create.js';
import { createCreditTopUpRoute } from './create.js';
import { getCreditTopUpRoute } from './get.js';

/** /v1/credit_top_ups: prepaid credit bought by (or for) a customer, charged through the payment processor. */
export const creditTopUpsModule: RouteModuleFactory = (deps) => ({
  name: 'credit-top-ups',
  area: 'control',
  register(server) {
    server.route(createCreditTopUpRoute(deps, createPaymentProcessor(deps.pg, deps.config)));
    server.route(getCreditTopUpRoute(deps));
  },
});
