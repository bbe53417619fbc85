import type { RouteModuleFactory } from '../../api/modules.js';
import { PgIdempotencyStore } from '../../../shared/http/idempotency.js';

const PURGE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Installs the Postgres-backed Idempotency-Key guard on the api's HTTP server (every authenticated POST of
 * every module gets it; see shared/http/idempotency.ts) and purges keys older than 24 h hourly.
 * It registers no route of its own.
 */
export const idempotencyModule: RouteModuleFactory = (deps) => {
  const store = new PgIdempotencyStore(deps.pg, { log: deps.log, secret: deps.config.SECRET_KEY });
  let timer: NodeJS.Timeout | undefined;
  const purge = () => void store.purgeExpired().catch((err) => deps.log.warn({ err }, 'purging expired idempotency keys failed'));
  return {
    name: 'idempotency',
    area: 'control',
    async start() {
      purge();
      timer = setInterval(purge, PURGE_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
    },
    register(server) {
      server.setIdempotencyGuard(store);
    },
  };
};
