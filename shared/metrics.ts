import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One Prometheus registry per process; every role exposes or pushes it. */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  private readonly httpDuration: Histogram<'route' | 'method'>;

  constructor(role: string) {
    this.registry.setDefaultLabels({ role });
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'meterline_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'meterline_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern',
      labelNames: ['route', 'method'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers: [this.registry],
    });
  }

  observeHttp(route: string, method: string, status: number, seconds: number): void {
    this.httpRequests.inc({ route, method, status: String(status) });
    this.httpDuration.observe({ route, method }, seconds);
  }

  counter<L extends string>(name: string, help: string, labelNames: L[] = []): Counter<L> {
    return (this.registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A gauge read when the metrics are collected (`read` returns the current value). */
  gauge(name: string, help: string, read: () => number): Gauge {
    return (this.registry.getSingleMetric(name) as Gauge | undefined) ?? new Gauge({ name, help, registers: [this.registry], collect() { this.set(read()); } });
  }

  histogram<L extends string>(name: string, help: string, buckets: number[], labelNames: L[] = []): Histogram<L> {
    return (this.registry.getSingleMetric(name) as Histogram<L> | undefined) ?? new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }
}
