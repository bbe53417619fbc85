import { parseConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logging.js';
import { Metrics } from '../../shared/metrics.js';
import { createPgPool } from '../../shared/clients/postgres.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { NatsNames, type NatsConnection } from '../../shared/clients/nats.js';
import type { Infra } from '../../shared/infra.js';
import type { ApiDeps, RouteDef, RouteRegistry } from '../../shared/http/route.js';
import type { AccountProtection } from '../../shared/limits/protection.js';
import type { ReadCaches } from '../../shared/read-cache.js';
import type { BodyBudget } from '../../shared/http/body-budget.js';
import type { Authenticator } from '../../shared/auth/types.js';
import type { RequestContext } from '../../shared/http/context.js';
import { ROUTE_MODULES } from '../roles/api/route-modules.js';
import { registerSystemRoutes } from '../roles/api/system-routes.js';

/**
 * The document `GET /openapi.json` serves, built without a server: the api's own route modules register their
 * routes (what `ApiService.start` does, minus starting their background work) and the openapi route's handler
 * renders them. Nothing connects: the clients are created but never used, and NATS, which a module would touch
 * only once started, is a stand-in that says so if it is touched. test/integration/openapi.test.ts checks that
 * a running api serves the same document.
 */
export async function servedOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = parseConfig({
    DATABASE_URL: 'postgres://docs@127.0.0.1:9/docs',
    NATS_URL: 'nats://127.0.0.1:9',
    CLICKHOUSE_URL: 'http://127.0.0.1:9',
    SECRET_KEY: '00'.repeat(32),
    LOG_LEVEL: 'silent',
  });
  const untouched = <T extends object>(what: string): T =>
    new Proxy({} as T, {
      get(_target, property) {
        throw new Error(`building the OpenAPI document touched ${what}.${String(property)}: it must not connect`);
      },
    });
  const infra: Infra = {
    config,
    log: createLogger({ level: 'silent', name: 'docs' }),
    metrics: new Metrics('docs'),
    pg: createPgPool(config.DATABASE_URL, 1),
    nats: untouched<NatsConnection>('nats'),
    natsNames: new NatsNames(config.NATS_NAMESPACE),
    clickhouse: createClickhouse(config.CLICKHOUSE_URL, config.CLICKHOUSE_DATABASE),
  };
  const deps: ApiDeps = {
    ...infra,
    authenticator: untouched<Authenticator>('authenticator'),
    protection: untouched<AccountProtection>('protection'),
    bodyBudget: untouched<BodyBudget>('bodyBudget'),
    reads: untouched<ReadCaches>('reads'),
  };
  const routes: RouteDef[] = [];
  const registry: RouteRegistry = { route: (def: RouteDef) => routes.push(def), routes };
  try {
    registerSystemRoutes(registry, { metrics: infra.metrics, readiness: () => Promise.reject(new Error('docs')) });
    for (const factory of ROUTE_MODULES) (await factory(deps)).register(registry);
    const route = routes.find((r) => r.method === 'GET' && r.path === '/openapi.json');
    if (!route) throw new Error('no GET /openapi.json route');
    const answer = await route.handler({} as RequestContext, undefined);
    return JSON.parse(String(answer.raw)) as Record<string, unknown>;
  } finally {
    await Promise.allSettled([infra.pg.end(), infra.clickhouse.close()]);
  }
}
