import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { MeterRegistryWriter } from '../../domain/meters/registry.js';
import { listMetersRoute } from './list.js';
import { getMeterRoute } from './get.js';
import { createMeterRoute } from './create.js';
import { updateMeterRoute } from './update.js';
import { UsageShards } from '../../../shared/clients/usage-shards.js';
import { registerUniqueMeter } from '../../domain/usage/unique-rollups-store.js';

/** How often every api process re-checks the KV registry against Postgres (besides at start). */
const RECONCILE_INTERVAL_MS = 60_000;

/**
 * /v1/meters (without usage, which the ingress module serves) + the KV meter registry writer, and the
 * ClickHouse shard clients a unique_count meter is registered with (services/domain/usage/unique-rollups-store.ts).
 */
export const metersModule: RouteModuleFactory = (deps) => {
  let registry: MeterRegistryWriter | undefined;
  let shards: UsageShards | undefined;
  const get = () => {
    if (!registry) throw new Error('meters module not started');
    return registry;
  };
  const registerUnique = (accountId: string, meterId: string, uniqueBy: string) => {
    if (!shards) throw new Error('meters module not started');
    return registerUniqueMeter(shards.of(accountId), deps.config.CLICKHOUSE_DATABASE, { accountId, meterId, uniqueBy });
  };
  const reconcile = new PeriodicTask({
    name: 'meter registry reconciliation',
    everyMs: RECONCILE_INTERVAL_MS,
    log: deps.log,
    run: () => get().reconcile(),
  });
  return {
    name: 'meters',
    area: 'control',
    async start() {
      registry = await MeterRegistryWriter.open(deps.nats, deps.natsNames.meterBucket, deps.pg, deps.log);
      shards = await UsageShards.open(deps.config, { quiet: true });
      // Before the listener opens: a commit lost after its KV put (crash, Postgres failure) is repaired first.
      await reconcile.start();
    },
    async stop() {
      await reconcile.stop();
      await shards?.close();
      shards = undefined;
    },
    register(server) {
      server.route(listMetersRoute(deps));
      server.route(getMeterRoute(deps));
      server.route(createMeterRoute(deps, get, registerUnique));
      server.route(updateMeterRoute(deps, get));
    },
  };
};
