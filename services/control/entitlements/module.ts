import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { EntitlementTable } from '../../domain/entitlements/table.js';
import { MovedAccounts } from '../../domain/entitlements/moved-accounts.js';
import { createEntitlementRoute } from './create.js';
import { listEntitlementsRoute } from './list.js';
import { getEntitlementRoute } from './get.js';
import { updateEntitlementRoute } from './update.js';
import { deleteEntitlementRoute } from './delete.js';
import { createGrantRoute } from './grant.js';
import { checkEntitlementRoute } from './check.js';

/**
 * /v1/entitlements (docs/entitlements.md): operators write, customers read their own; the check is answered
 * from this process's in-memory table, loaded before the api listens and refreshed in the background.
 */
export const entitlementsModule: RouteModuleFactory = (deps) => {
  const table = new EntitlementTable(
    {
      pg: deps.pg,
      ch: deps.clickhouse,
      database: deps.config.CLICKHOUSE_DATABASE,
      log: deps.log,
      moved: new MovedAccounts(deps.nats, deps.natsNames.usageMovedSubject, deps.log),
    },
    { fullRefreshMs: deps.config.ENTITLEMENT_FULL_REFRESH_SECONDS * 1000 },
  );
  deps.metrics.gauge('meterline_entitlements_in_memory', 'Entitlements in the api’s in-memory table', () => table.size);
  return {
    name: 'entitlements',
    area: 'control',
    register(server) {
      server.route(checkEntitlementRoute(table));
      for (const route of [
        createEntitlementRoute,
        listEntitlementsRoute,
        getEntitlementRoute,
        updateEntitlementRoute,
        deleteEntitlementRoute,
        createGrantRoute,
      ])
        server.route(route(deps));
    },
    start: () => table.start(),
    stop: () => table.stop(),
    health: async () => table.health(),
  };
};
