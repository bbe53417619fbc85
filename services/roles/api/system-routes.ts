import type { RouteRegistry } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import type { Metrics } from '../../../shared/metrics.js';
import type { HealthReport } from '../../../shared/service.js';

const SERVERS = ['postgres', 'nats', 'clickhouse'];

/** Liveness, readiness (every dependency answers) and Prometheus metrics. */
export function registerSystemRoutes(
  server: RouteRegistry,
  deps: { metrics: Metrics; readiness: () => Promise<HealthReport> },
): void {
  server.route({
    method: 'GET',
    path: '/healthz',
    auth: 'public',
    handler: () => reply.ok({ status: 'ok' }),
    doc: { summary: 'Liveness: the process serves requests', tags: ['system'] },
  });
  server.route({
    method: 'GET',
    path: '/readyz',
    auth: 'public',
    handler: async () => {
      const report = await deps.readiness();
      const failing = Object.entries(report.checks)
        .filter(([, c]) => !c.ok)
        .map(([name]) => name);
      // A component (the ingress publisher, say) fails because a server is down: name the server, the cause.
      const servers = failing.filter((n) => SERVERS.includes(n));
      const down = servers.length ? servers : failing;
      return report.ok
        ? reply.ok({ status: 'ready', checks: report.checks })
        : reply.json(503, { status: 'unavailable', down, checks: report.checks }, { 'Retry-After': '1' });
    },
    doc: { summary: 'Readiness: Postgres, NATS and ClickHouse all answer', tags: ['system'] },
  });
  server.route({
    method: 'GET',
    path: '/metrics',
    auth: 'public',
    handler: async () => reply.file(await deps.metrics.registry.metrics(), deps.metrics.registry.contentType),
    doc: { summary: 'Prometheus metrics', tags: ['system'] },
  });
}
