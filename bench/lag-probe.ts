/**
 * Ingest → queryable lag: while load runs, one record every `everyMs` (200) goes to a probe meter; ClickHouse
 * is polled every `pollMs` (100) for the probe ids it holds, by primary key (cheap next to the load).
 * Lag = first seen in ClickHouse − 202 received; the poll interval bounds the resolution (a lag is
 * over-estimated by at most pollMs).
 */
import type { ClickHouseClient } from '@clickhouse/client';

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
  private readonly seen = new Set<string>();
  private sendTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private failures = 0;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly accountId: string,
    private readonly meterId: string,
    private readonly ch: ClickHouseClient,
    private readonly prefix = `probe-${Date.now().toString(36)}`,
    private readonly everyMs = 200,
    private readonly pollMs = 100,
  ) {}

  start(): void {
    this.sendTimer = setInterval(() => void this.send(), this.everyMs);
    this.pollTimer = setInterval(() => void this.poll(), this.pollMs);
  }

  private async send(): Promise<void> {
    const id = `${this.prefix}-${this.n++}`;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, value: 1, timestamp: new Date(Date.now() - 1000).toISOString() }),
      });
      await res.arrayBuffer();
      if (res.status === 202) this.acked.set(id, Date.now());
      else this.failures++;
    } catch {
      this.failures++;
    }
  }

  private async poll(): Promise<void> {
    if (this.polling || this.acked.size === this.seen.size) return;
    this.polling = true;
    try {
      // By primary-key prefix (account, meter): a few granules, not a scan of the millions of load rows.
      const rs = await this.ch.query({
        query: `SELECT record_id FROM usage_records WHERE account_id = '${this.accountId}' AND meter_id = '${this.meterId}'`,
        format: 'JSONEachRow',
      });
      const now = Date.now();
      for (const { record_id } of await rs.json<{ record_id: string }>()) {
        if (this.seen.has(record_id)) continue;
        const acked = this.acked.get(record_id);
        if (acked === undefined) continue; // its 202 is still on the way
        this.seen.add(record_id);
        this.lags.push(now - acked);
        this.samples.push({ id: record_id, acked_at_s: (acked - this.t0) / 1000, lag_ms: now - acked });
      }
    } catch {
      this.pollErrors++; // ClickHouse busy: the next poll catches up (and the lag shows it)
    } finally {
      this.polling = false;
    }
  }

  /** Stops probing and waits (up to `waitMs`) until every acknowledged probe is queryable. */
  async stop(waitMs = 60_000): Promise<LagSummary> {
    clearInterval(this.sendTimer);
    const deadline = Date.now() + waitMs;
    while (this.seen.size < this.acked.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, this.pollMs));
    clearInterval(this.pollTimer);
    const sorted = [...this.lags].sort((a, b) => a - b);
    const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
    const worst = [...this.samples].sort((a, b) => b.lag_ms - a.lag_ms).slice(0, 5);
    return { probes: this.acked.size, seen: this.seen.size, p50_ms: q(0.5), p99_ms: q(0.99), max_ms: sorted[sorted.length - 1] ?? NaN, poll_ms: this.pollMs, poll_errors: this.pollErrors, worst };
  }

  get refused(): number {
    return this.failures;
  }
}
