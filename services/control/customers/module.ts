import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { CustomerRegistryWriter } from './registry-writer.js';
import { createCustomerRoute } from './create.js';
import { listCustomersRoute } from './list.js';
import { getCustomerRoute } from './get.js';
import { updateCustomerRoute } from './update.js';
import { createSignInRoute, listSignInsRoute } from './sign-ins.js';

/** How often an api process compares the customer registry with Postgres (its first pass starts with the process). */
const RECONCILE_INTERVAL_MS = 10 * 60_000;

/**
 * /v1/customers (operator mode, admin) and the customer registry writer. Reconciliation runs in the background:
 * with a million customers it reads every shard, which must not delay the listener.
 */
export const customersModule: RouteModuleFactory = (deps) => {
  let registry: CustomerRegistryWriter | undefined;
  const get = () => {
    if (!registry) throw new Error('customers module not started');
    return registry;
  };
  const reconcile = new PeriodicTask({
    name: 'customer registry reconciliation',
    everyMs: RECONCILE_INTERVAL_MS,
    log: deps.log,
    run: () => get().reconcile(deps.pg),
  });
  return {
    name: 'customers',
    area: 'control',
    async start() {
      registry = await CustomerRegistryWriter.open(deps.nats, deps.natsNames.customerBucket, deps.log);
      void reconcile.start(); // logs its own failures
    },
    async stop() {
      await reconcile.stop();
    },
    register(server) {
      server.route(listCustomersRoute(deps));
      server.route(getCustomerRoute(deps));
      server.route(createCustomerRoute(deps, get));
      server.route(updateCustomerRoute(deps, get));
      server.route(createSignInRoute(deps));
      server.route(listSignInsRoute(deps));
    },
  };
};
