import type { RouteModuleFactory } from '../../../shared/http/route.js';
import type { BillingDeps } from '../../domain/billing/deps.js';
import { billingDeps } from '../../workers/billing-deps.js';
import { createTestClockRoute } from './create.js';
import { listTestClocksRoute } from './list.js';
import { deleteTestClockRoute, getTestClockRoute } from './get.js';
import { advanceTestClockRoute, attachCustomerRoute } from './advance.js';

/**
 * /v1/test_clocks: simulated time for an operator's test customers (docs/test-clocks.md). An advance runs the
 * billing engine in this process; its invoice-line worker pool starts on the first advance.
 */
export const testClocksModule: RouteModuleFactory = (deps) => {
  let billing: BillingDeps | undefined;
  const lazyBillingDeps = (): BillingDeps => (billing ??= billingDeps(deps));
  return {
    name: 'test-clocks',
    area: 'control',
    register(server) {
      server.route(createTestClockRoute(deps));
      server.route(listTestClocksRoute(deps));
      server.route(getTestClockRoute(deps));
      server.route(deleteTestClockRoute(deps));
      server.route(advanceTestClockRoute(deps, lazyBillingDeps));
      server.route(attachCustomerRoute(deps));
    },
    async stop() {
      const pool = billing?.linesPool;
      billing = undefined;
      await pool?.destroy();
    },
  };
};
