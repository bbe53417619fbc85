import type { Infra } from '../../../shared/infra.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import type { Component } from '../role.js';
import type { BillingDeps } from '../../domain/billing/deps.js';
import { billingDeps } from '../../workers/billing-deps.js';
import { runBilling } from '../../domain/billing/run.js';
import { issueThresholdInvoices } from '../../domain/billing/thresholds.js';
import { attemptDuePayments } from '../../domain/billing/payments.js';

/**
 * The billing role's work: a billing run (due period closes, due payment attempts) every
 * BILLING_INTERVAL_SECONDS, the first one at start. Runs never overlap within a process (PeriodicTask);
 * several billing processes may run at once (the run is safe for that). stop() waits for the run in
 * progress, then ends the worker threads.
 */
export class BillingScheduler implements Component {
  readonly name = 'billing-scheduler';
  private deps: BillingDeps | undefined;
  private task: PeriodicTask | undefined;
  /** Progressive billing: the threshold check every BILLING_THRESHOLD_INTERVAL_SECONDS, between runs. */
  private thresholds: PeriodicTask | undefined;
  private lastError: string | undefined;
  private lastSuccessSeconds = 0;
  private readonly runs;

  constructor(private readonly infra: Infra) {
    this.runs = infra.metrics.counter('meterline_billing_runs_total', 'Billing runs by outcome (ok, failed)', [
      'outcome',
    ]);
    infra.metrics.gauge(
      'meterline_billing_last_success_timestamp_seconds',
      'Unix time the last billing run of this process finished without error (0: none yet)',
      () => this.lastSuccessSeconds,
    );
  }

  async start(): Promise<void> {
    const deps = (this.deps = billingDeps(this.infra));
    this.task = new PeriodicTask({
      name: 'billing run',
      everyMs: this.infra.config.BILLING_INTERVAL_SECONDS * 1000,
      log: this.infra.log,
      run: async () => {
        try {
          const r = await runBilling(deps, new Date());
          this.lastError = undefined;
          this.runs.inc({ outcome: 'ok' });
          this.lastSuccessSeconds = Date.now() / 1000;
          if (r.invoices.length || r.payments.length)
            this.infra.log.info(
              { invoices: r.invoices.length, payments: r.payments.length, timings: r.timings },
              'billing run',
            );
        } catch (err) {
          this.lastError = (err as Error).message;
          this.runs.inc({ outcome: 'failed' });
          throw err;
        }
      },
    });
    this.thresholds = new PeriodicTask({
      name: 'billing thresholds',
      everyMs: this.infra.config.BILLING_THRESHOLD_INTERVAL_SECONDS * 1000,
      log: this.infra.log,
      run: async () => {
        const now = new Date();
        const issued = await issueThresholdInvoices(deps, now);
        if (issued.length === 0) return;
        // Charged at once, by the payment pass every invoice goes through.
        const payments = await attemptDuePayments(deps, now);
        this.infra.log.info({ invoices: issued.length, payments: payments.length }, 'threshold invoices');
      },
    });
    // The first run may take a while (a backlog of periods): the role is up meanwhile.
    void this.task.start();
    void this.thresholds.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.task?.stop(), this.thresholds?.stop()]);
    this.thresholds = undefined;
    await this.deps?.linesPool.destroy();
    this.task = undefined;
    this.deps = undefined;
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.lastError ? { ok: false, detail: `last billing run failed: ${this.lastError}` } : { ok: true };
  }
}
