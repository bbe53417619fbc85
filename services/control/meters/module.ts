import type { RouteModuleFactory } from '../../api/modules.js';
import { MeterRegistryWriter } from './registry.js';
import { listMetersRoute } from './list.js';
import { getMeterRoute } from './get.js';
import { createMeterRoute } from './create.js';
import { updateMeterRoute } from './update.js';

/** How often every api process re-checks the KV registry against Postgres (besides at start). */
const RECONCILE_INTERVAL_MS = 60_000;

/** /v1/meters (without usage, which the ingress module serves) + the KV meter registry writer. */
export const metersModule: RouteModuleFactory = (deps) => {
  let registry: MeterRegistryWriter | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  const get = () => {
    if (!registry) throw new Error('meters module not started');
    return registry;
  };
  const reconcile = () => {
    running ??= get()
      .reconcile()
      .catch((err) => deps.log.error({ err }, 'meter registry reconciliation failed; retrying later'))
      .finally(() => (running = undefined));
    return running;
  };
  return {
    name: 'meters',
    area: 'control',
    async start() {
      registry = await MeterRegistryWriter.open(deps.nats, deps.natsNames.meterBucket, deps.pg, deps.log);
      // Before the listener opens: a commit lost after its KV put (crash, Postgres failure) is repaired first.
      await reconcile();
      timer = setInterval(() => void reconcile(), RECONCILE_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
    register(server) {
      server.route(listMetersRoute(deps));
      server.route(getMeterRoute(deps));
      server.route(createMeterRoute(deps, get));
      server.route(updateMeterRoute(deps, get));
    },
  };
};
