import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { CustomerRegistryWriter } from '../../domain/customers/registry-writer.js';
import { createCustomerRoute } from './create.js';
import { listCustomersRoute } from './list.js';
import { getCustomerRoute } from './get.js';
import { updateCustomerRoute } from './update.js';
import { createSignInRoute, listSignInsRoute } from './sign-ins.js';

/** How often an api process compares the customer registry with Postgres, and when its first pass starts. */
const RECONCILE_INTERVAL_MS = 10 * 60_000;
const FIRST_RECONCILE_AFTER_MS = 60_000;

/**
 * /v1/customers (operator mode, admin) and the customer registry writer. Reconciliation runs in the background,
 * its first pass a minute after start: with a million customers it reads every shard, which must neither delay
 * the listener nor compete with the registry's own load.
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
  let first: NodeJS.Timeout | undefined;
  return {
    name: 'customers',
    area: 'control',
    async start() {
      registry = await CustomerRegistryWriter.open(deps.nats, deps.natsNames.customerBucket, deps.log);
      first = setTimeout(() => void reconcile.start(), FIRST_RECONCILE_AFTER_MS); // logs its own failures
      first.unref();
    },
    async stop() {
      clearTimeout(first);
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
