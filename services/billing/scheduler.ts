import type { Infra } from '../../shared/infra.js';
import type { Component } from '../role.js';
import { billingDeps, type BillingDeps } from './deps.js';
import { runBilling } from './run.js';

/**
 * The billing role's work: a billing run (due period closes, due payment attempts) every
 * BILLING_INTERVAL_SECONDS, the first one at start. Runs never overlap within a process; several billing
 * processes may run at once (the run is safe for that). stop() waits for the run in progress, then ends the
 * worker threads.
 */
export class BillingScheduler implements Component {
  readonly name = 'billing-scheduler';
  private deps: BillingDeps | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastError: string | undefined;

  constructor(private readonly infra: Infra) {}

  async start(): Promise<void> {
    this.deps = billingDeps(this.infra);
    this.tick();
  }

  private tick(): void {
    if (this.stopped) return;
    this.running = this.runOnce().finally(() => {
      this.running = undefined;
      if (!this.stopped) this.timer = setTimeout(() => this.tick(), this.infra.config.BILLING_INTERVAL_SECONDS * 1000);
    });
  }

  private async runOnce(): Promise<void> {
    try {
      const r = await runBilling(this.deps!, new Date());
      this.lastError = undefined;
      if (r.invoices.length || r.payments.length) {
        this.infra.log.info({ invoices: r.invoices.length, payments: r.payments.length, timings: r.timings }, 'billing run');
      }
    } catch (err) {
      this.lastError = (err as Error).message;
      this.infra.log.error({ err }, 'billing run failed; the next tick retries');
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.deps?.linesPool.destroy();
    this.deps = undefined;
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.lastError ? { ok: false, detail: `last billing run failed: ${this.lastError}` } : { ok: true };
  }
}
