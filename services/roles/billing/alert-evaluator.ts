import type { Infra } from '../../../shared/infra.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import type { Component } from '../role.js';
import { evaluateAlerts } from '../../domain/alerts/evaluate.js';

/** How often alerts are evaluated: a crossing fires within about this long after ClickHouse holds its record. */
const EVERY_MS = 1_000;

/**
 * The billing role's alert evaluator (docs/alerts.md): one pass of services/domain/alerts/evaluate.ts every
 * second. Several billing processes may run it at once: each firing is recorded once.
 */
export class AlertEvaluator implements Component {
  readonly name = 'alert-evaluator';
  private task: PeriodicTask | undefined;
  private lastError: string | undefined;
  private readonly fired;

  constructor(private readonly infra: Infra) {
    this.fired = infra.metrics.counter(
      'meterline_alerts_triggered_total',
      'alert.triggered events this process emitted',
    );
  }

  async start(): Promise<void> {
    const { pg, clickhouse, config } = this.infra;
    const deps = {
      pg,
      clickhouse,
      database: config.CLICKHOUSE_DATABASE,
      graceMs: config.BILLING_GRACE_SECONDS * 1000,
      known: new Map<number, Set<string>>(),
    };
    this.task = new PeriodicTask({
      name: 'alert evaluation',
      everyMs: EVERY_MS,
      log: this.infra.log,
      run: async () => {
        try {
          const fired = await evaluateAlerts(deps);
          this.lastError = undefined;
          if (fired.length) this.fired.inc({}, fired.length);
        } catch (err) {
          this.lastError = (err as Error).message;
          throw err;
        }
      },
    });
    void this.task.start();
  }

  async stop(): Promise<void> {
    await this.task?.stop();
    this.task = undefined;
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.lastError ? { ok: false, detail: `last alert evaluation failed: ${this.lastError}` } : { ok: true };
  }
}
