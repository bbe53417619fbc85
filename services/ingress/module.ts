import type { RouteModuleFactory } from '../../shared/http/route.js';
import { MeterRegistry } from '../../shared/meters/registry.js';
import { CustomerRegistry } from '../../shared/customers/registry.js';
import { UsagePublisher } from './publisher.js';
import { recordMeterUsageRoute } from './record-meter-usage.js';
import { recordUsageRoute } from './record-usage.js';
import { UsageStreams } from './usage-stream.js';
import type { IngressDeps } from './deps.js';

/**
 * The usage hot path: token check (shared, cached), meter and customer from the in-memory registries, rules, group-commit
 * publish to JetStream, 202. No Postgres. start() loads the registry and connects the publisher before the
 * api listens; stop() (after the listener closed) flushes and waits for every pending acknowledgement.
 */
export const ingressModule: RouteModuleFactory = (infra) => {
  const registry = new MeterRegistry(
    infra.nats,
    infra.natsNames,
    infra.log,
    infra.config.WATCH_MAX_STALENESS_SECONDS * 1000,
  );
  infra.metrics.gauge(
    'meterline_meter_registry_fresh',
    '1 while the meter registry (NATS KV watch) is confirmed current; 0 once unconfirmed for WATCH_MAX_STALENESS_SECONDS: ingest answers 503',
    () => (registry.health().ok ? 1 : 0),
  );
  const customers = new CustomerRegistry(
    infra.nats,
    infra.natsNames,
    infra.log,
    infra.config.WATCH_MAX_STALENESS_SECONDS * 1000,
  );
  infra.metrics.gauge(
    'meterline_customer_registry_fresh',
    '1 while the customer registry (NATS KV watch) is confirmed current; 0 once unconfirmed for WATCH_MAX_STALENESS_SECONDS: attributed ingest answers 503',
    () => (customers.health().ok ? 1 : 0),
  );
  const publisher = new UsagePublisher({
    natsUrl: infra.config.NATS_URL,
    names: infra.natsNames,
    log: infra.log,
    metrics: infra.metrics,
    name: `meterline-ingress-${process.pid}`,
  });
  const deps: IngressDeps = { registry, customers, publisher, names: infra.natsNames, protection: infra.protection };
  const streams = new UsageStreams(deps, {
    authenticator: infra.authenticator,
    maxInflight: infra.config.USAGE_STREAM_MAX_INFLIGHT,
    log: infra.log,
    metrics: infra.metrics,
    budget: infra.bodyBudget,
  });
  return {
    name: 'ingress',
    area: 'ingress',
    async start() {
      await Promise.all([registry.start(), customers.start()]);
      await publisher.start();
      streams.start();
    },
    register(server) {
      server.route(recordMeterUsageRoute(deps));
      server.route(recordUsageRoute(deps));
      server.route(streams.route());
    },
    async stop() {
      await streams.stop(); // answers the frames it took while the publisher still runs
      await publisher.stop();
      await Promise.all([registry.stop(), customers.stop()]);
    },
    async health() {
      const current = registry.health();
      if (!current.ok) return current;
      const known = customers.health();
      if (!known.ok) return known;
      if (!publisher.isConnected) return { ok: false, detail: 'usage publisher disconnected from NATS' };
      return { ok: true, detail: `${registry.size} meters, ${customers.size} customers` };
    },
  };
};
