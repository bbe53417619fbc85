import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { buildInfo } from './build-info.js';

const HTTP_DURATION_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/** One Prometheus registry per process; every role exposes or pushes it. */
export class Metrics {
  readonly registry = new Registry();
  private readonly http = new HttpRequestStats();

  constructor(role: string) {
    this.registry.setDefaultLabels({ role });
    collectDefaultMetrics({ register: this.registry });
    for (const metric of this.http.metrics()) this.registry.registerMetric(metric);
    const build = new Gauge({
      name: 'meterline_build_info',
      help: 'Always 1; labels name the package version and the release (BUILD file) this process runs',
      labelNames: ['version', 'build'],
      registers: [this.registry],
    });
    build.set(buildInfo(), 1);
  }

  observeHttp(route: string, method: string, status: number, seconds: number): void {
    this.http.observe(route, method, status, seconds);
  }

  counter<L extends string>(name: string, help: string, labelNames: L[] = []): Counter<L> {
    return (
      (this.registry.getSingleMetric(name) as Counter<L> | undefined) ??
      new Counter({ name, help, labelNames, registers: [this.registry] })
    );
  }

  /** A gauge read when the metrics are collected (`read` returns the current value). */
  gauge(name: string, help: string, read: () => number): Gauge {
    return (
      (this.registry.getSingleMetric(name) as Gauge | undefined) ??
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      })
    );
  }

  /** A gauge with labels, read when the metrics are collected (`read` sets each labelled value). */
  labelledGauge<L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    read: (set: (labels: Record<L, string>, value: number) => void) => Promise<void> | void,
  ): Gauge<L> {
    return (
      (this.registry.getSingleMetric(name) as Gauge<L> | undefined) ??
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        async collect() {
          this.reset();
          await read((labels, value) => this.set(labels, value));
        },
      })
    );
  }

  histogram<L extends string>(name: string, help: string, buckets: number[], labelNames: L[] = []): Histogram<L> {
    return (
      (this.registry.getSingleMetric(name) as Histogram<L> | undefined) ??
      new Histogram({ name, help, labelNames, buckets, registers: [this.registry] })
    );
  }
}

/** Counts and latency of one route pattern and method. */
interface RouteStats {
  byStatus: Map<number, number>;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * `meterline_http_requests_total` and `meterline_http_request_duration_seconds`, counted in plain numbers per
 * (route, method) and turned into Prometheus values only when scraped. prom-client's own counter and
 * histogram build, validate and hash a label object on every call — a few µs per request on the ingest
 * path (docs/design.md §11) — where this is two map lookups and a bucket search.
 */
class HttpRequestStats {
  private readonly routes = new Map<string, Map<string, RouteStats>>();

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.routes.get(route);
    if (byMethod === undefined) this.routes.set(route, (byMethod = new Map()));
    let s = byMethod.get(method);
    if (s === undefined)
      byMethod.set(
        method,
        (s = { byStatus: new Map(), buckets: new Float64Array(HTTP_DURATION_BUCKETS.length + 1), sum: 0, count: 0 }),
      );
    s.byStatus.set(status, (s.byStatus.get(status) ?? 0) + 1);
    let i = 0;
    while (i < HTTP_DURATION_BUCKETS.length && seconds > HTTP_DURATION_BUCKETS[i]!) i++;
    s.buckets[i]!++;
    s.sum += seconds;
    s.count++;
  }

  /** The two metrics in the shape prom-client's registry reads (`get()`), for `registerMetric`. */
  metrics(): Metric[] {
    const requests = {
      name: 'meterline_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({ ...requests, values: this.requestValues() }),
    };
    const duration = {
      name: 'meterline_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern',
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({ ...duration, values: this.durationValues() }),
    };
    return [requests, duration] as unknown as Metric[];
  }

  private requestValues(): { labels: Record<string, string>; value: number }[] {
    const out = [];
    for (const [route, byMethod] of this.routes)
      for (const [method, s] of byMethod)
        for (const [status, n] of s.byStatus) out.push({ labels: { route, method, status: String(status) }, value: n });
    return out;
  }

  private durationValues(): { labels: Record<string, string | number>; value: number; metricName: string }[] {
    const name = 'meterline_http_request_duration_seconds';
    const out = [];
    for (const [route, byMethod] of this.routes)
      for (const [method, s] of byMethod) {
        let cumulative = 0;
        for (let i = 0; i <= HTTP_DURATION_BUCKETS.length; i++) {
          cumulative += s.buckets[i]!;
          out.push({
            labels: { le: HTTP_DURATION_BUCKETS[i] ?? '+Inf', route, method },
            value: cumulative,
            metricName: `${name}_bucket`,
          });
        }
        out.push({ labels: { route, method }, value: s.sum, metricName: `${name}_sum` });
        out.push({ labels: { route, method }, value: s.count, metricName: `${name}_count` });
      }
    return out;
  }
}
