import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { UsageShards } from '../../../shared/clients/usage-shards.js';
import { createCorrectionRoute } from './create.js';
import { listCorrectionsRoute } from './list.js';
import { completePendingCorrections } from '../../domain/corrections/apply.js';
import { UsageMovedPublisher } from '../../domain/usage/usage-moved.js';

/** A correction pending this long was interrupted (its request takes seconds): the sweep completes it. */
export const PENDING_GRACE_MS = 60_000;
const SWEEP_EVERY_MS = 30_000;

/**
 * /v1/meters/{id}/usage/corrections. Owns the ClickHouse shard clients the corrections write with (the
 * account's shard, like the consumer) and the sweep that completes corrections left pending.
 */
export const correctionsModule: RouteModuleFactory = (deps) => {
  let shards: UsageShards | undefined;
  const openShards = () => {
    if (!shards) throw new Error('corrections module not started');
    return shards;
  };
  const database = deps.config.CLICKHOUSE_DATABASE;
  const moved = new UsageMovedPublisher(deps.nats, deps.natsNames.usageMovedSubject, deps.log);
  const sweep = new PeriodicTask({
    name: 'usage corrections sweep',
    everyMs: SWEEP_EVERY_MS,
    log: deps.log,
    run: () => completePendingCorrections(deps.pg, openShards(), database, PENDING_GRACE_MS, undefined, moved),
  });
  return {
    name: 'usage-corrections',
    area: 'control',
    register(server) {
      server.route(createCorrectionRoute(deps, openShards, moved));
      server.route(listCorrectionsRoute(deps));
    },
    async start() {
      shards = await UsageShards.open(deps.config, { quiet: true });
      void sweep.start();
    },
    async stop() {
      await sweep.stop();
      moved.flush();
      await shards?.close();
      shards = undefined;
    },
  };
};
