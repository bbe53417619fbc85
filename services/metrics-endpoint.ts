/**
 * `/metrics`, `/healthz` and `/readyz` of the roles that serve no HTTP of their own (consumer, dispatcher,
 * billing), on METRICS_HOST:METRICS_PORT, so that Prometheus scrapes every role the same way (docs/metrics.md).
 * The api serves the same paths on its own port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from '../shared/metrics.js';
import type { HealthReport } from '../shared/service.js';

export interface MetricsEndpoint {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsEndpoint(o: {
  host: string;
  port: number;
  metrics: Metrics;
  health: () => Promise<HealthReport>;
}): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (req.method !== 'GET') return send(405, 'text/plain', 'GET only\n');
    if (path === '/metrics') {
      o.metrics.registry.metrics().then(
        (text) => send(200, o.metrics.registry.contentType, text),
        (err: Error) => send(500, 'text/plain', `${err.message}\n`),
      );
      return;
    }
    if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      o.health().then(
        (r) =>
          send(
            r.ok ? 200 : 503,
            'application/json',
            JSON.stringify({ status: r.ok ? 'ready' : 'unavailable', checks: r.checks }),
          ),
        (err: Error) => send(503, 'application/json', JSON.stringify({ status: 'unavailable', error: err.message })),
      );
      return;
    }
    send(404, 'text/plain', 'not found\n');
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: o.host, port: o.port }, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
