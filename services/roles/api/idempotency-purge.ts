import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { purgeExpiredIdempotencyKeys } from '../../../shared/http/idempotency.js';
import { PeriodicTask } from '../../../shared/periodic.js';

/**
 * Idempotency-Key housekeeping: deletes keys older than 24 h, at start and hourly. (The keys themselves are
 * checked by the pipeline's idempotency step: services/roles/api/pipeline.ts.) It registers no route.
 */
export const idempotencyModule: RouteModuleFactory = (deps) => {
  const purge = new PeriodicTask({
    name: 'purging expired idempotency keys',
    everyMs: 60 * 60 * 1000,
    log: deps.log,
    run: () => purgeExpiredIdempotencyKeys(deps.pg),
  });
  return {
    name: 'idempotency',
    area: 'control',
    async start() {
      void purge.start();
    },
    stop: () => purge.stop(),
    register() {},
  };
};
