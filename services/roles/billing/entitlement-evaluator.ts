import type { Infra } from '../../../shared/infra.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import { emitExhaustions } from '../../domain/entitlements/exhaustion.js';
import type { Component } from '../role.js';

/**
 * entitlement.exhausted events (docs/entitlements.md): every second, the metered `block` entitlements that reached
 * their limit get their period's one event (emitExhaustions: safe with several billing processes at once).
 */
export class EntitlementEvaluator implements Component {
  readonly name = 'entitlement-evaluator';
  private readonly task: PeriodicTask;

  constructor(infra: Infra, everyMs = 1_000) {
    this.task = new PeriodicTask({
      name: 'entitlement exhaustion',
      everyMs,
      log: infra.log,
      run: async () => {
        const n = await emitExhaustions(infra.pg, infra.clickhouse, infra.config.CLICKHOUSE_DATABASE);
        if (n) infra.log.info({ events: n }, 'entitlement.exhausted events appended');
      },
    });
  }

  async start(): Promise<void> {
    void this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }
}
