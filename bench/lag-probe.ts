/**
 * Ingest → visible-in-API lag: while load runs, one record every `everyMs` (200) goes to a probe meter, and
 * `GET /v1/meters/{probe}/usage?window=none` is polled every `pollMs` (100) — the read path users see
 * (rollups + unswept raw hours), not the raw table. The answer's `count` says how many probes are visible:
 * when it first reaches k, the k-th acknowledged probe counts as visible (records become visible in about
 * the order they were acknowledged; an out-of-order one shifts a lag to its neighbour, not the
 * distribution). Lag = that moment − 202 received; the poll interval bounds the resolution (a lag is
 * over-estimated by at most pollMs). Both go through `meterline/client`'s typed API client.
 */
import { MeterlineClient } from '../shared/client/index.js';

export interface LagSummary {
  probes: number;
  seen: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  poll_ms: number;
  poll_errors: number;
  /** The slowest probes: when their 202 arrived (seconds after the probe started) and their lag. */
  worst: { id: string; acked_at_s: number; lag_ms: number }[];
}

export class LagProbe {
  private n = 0;
  private readonly acked = new Map<string, number>();
  private readonly lags: number[] = [];
  private readonly t0 = Date.now();
  private readonly samples: { id: string; acked_at_s: number; lag_ms: number }[] = [];
  private pollErrors = 0;
  /** Acknowledged probes in the order their 202 arrived. */
  private readonly ackOrder: string[] = [];
  private visible = 0;
  private sendTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private failures = 0;
  /** Probes sent whose answer has not come back. */
  private inflight = 0;

  private readonly client: MeterlineClient;

  constructor(
    baseUrl: string,
    token: string,
    private readonly meterId: string,
    private readonly prefix = `probe-${Date.now().toString(36)}`,
    private readonly everyMs = 200,
    private readonly pollMs = 100,
    /** How old each probe's timestamp is: 1 s (live), or days (a late record, landing in a closed hour). */
    private readonly ageMs = 1000,
  ) {
    this.client = new MeterlineClient({ baseUrl, token });
  }

  start(): void {
    this.sendTimer = setInterval(() => void this.send(), this.everyMs);
    this.pollTimer = setInterval(() => void this.poll(), this.pollMs);
  }

  /**
   * Sends no more and, once every probe sent is seen, polls no more: while an ingest phase's CPU per record is
   * measured. Each poll is a usage read of ClickHouse CPU (~10 ms under load, whatever the ingest rate): at ten a
   * second they were most of ClickHouse's CPU per record in `single`, a read load counted as ingest's cost.
   */
  async pause(waitMs = 10_000): Promise<void> {
    clearInterval(this.sendTimer);
    this.sendTimer = undefined;
    const deadline = Date.now() + waitMs;
    while ((this.inflight > 0 || this.visible < this.acked.size) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, this.pollMs));
    clearInterval(this.pollTimer);
  }

  resume(): void {
    if (this.sendTimer === undefined) this.start();
  }

  private async send(): Promise<void> {
    const id = `${this.prefix}-${this.n++}`;
    this.inflight++;
    try {
      await this.client.recordMeterUsage(this.meterId, {
        id,
        value: 1,
        timestamp: new Date(Date.now() - this.ageMs).toISOString(),
      });
      this.acked.set(id, Date.now());
      this.ackOrder.push(id);
    } catch {
      this.failures++; // refused (MeterlineError) or no answer
    } finally {
      this.inflight--;
    }
  }

  private async poll(): Promise<void> {
    if (this.polling || this.acked.size === this.visible) return;
    this.polling = true;
    try {
      const body = await this.client.getUsage(this.meterId, {
        window: 'none',
        start_date: new Date(this.t0 - this.ageMs - 86_400_000).toISOString().slice(0, 10),
      });
      const now = Date.now();
      // Only probes whose 202 has arrived can be matched; the rest are counted on a later poll.
      const visible = Math.min(body.count, this.ackOrder.length);
      for (; this.visible < visible; this.visible++) {
        const id = this.ackOrder[this.visible]!;
        const acked = this.acked.get(id)!;
        this.lags.push(now - acked);
        this.samples.push({ id, acked_at_s: (acked - this.t0) / 1000, lag_ms: now - acked });
      }
    } catch {
      this.pollErrors++; // api or ClickHouse busy: the next poll catches up (and the lag shows it)
    } finally {
      this.polling = false;
    }
  }

  /** Stops probing and waits (up to `waitMs`) until every acknowledged probe is queryable. */
  async stop(waitMs = 60_000): Promise<LagSummary> {
    clearInterval(this.sendTimer);
    const deadline = Date.now() + waitMs;
    while (this.visible < this.acked.size && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, this.pollMs));
    clearInterval(this.pollTimer);
    const sorted = [...this.lags].sort((a, b) => a - b);
    const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
    const worst = [...this.samples].sort((a, b) => b.lag_ms - a.lag_ms).slice(0, 5);
    return {
      probes: this.acked.size,
      seen: this.visible,
      p50_ms: q(0.5),
      p99_ms: q(0.99),
      max_ms: sorted[sorted.length - 1] ?? NaN,
      poll_ms: this.pollMs,
      poll_errors: this.pollErrors,
      worst,
    };
  }

  get refused(): number {
    return this.failures;
  }
}
