import type { Infra } from '../../../shared/infra.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import type { Component } from '../role.js';
import { reconcileUsageSubscribers } from '../../domain/webhooks/usage-subscribers.js';
import { purgePublishedEvents } from '../../domain/events/outbox-store.js';

/**
 * Periodic dispatcher chores: the meter.usage.recorded subscriber bucket is reconciled with Postgres (a route
 * whose sync failed is repaired here), and published events past their retention are deleted.
 */
export class DispatcherHousekeeping implements Component {
  readonly name = 'dispatcher-housekeeping';
  private readonly task: PeriodicTask;

  constructor(
    private readonly infra: Infra,
    everyMs = 60_000,
  ) {
    this.task = new PeriodicTask({ name: 'dispatcher housekeeping', everyMs, log: infra.log, run: () => this.run() });
  }

  async start(): Promise<void> {
    void this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  private async run(): Promise<void> {
    const repaired = await reconcileUsageSubscribers(this.infra);
    if (repaired) this.infra.log.info({ accounts: repaired }, 'webhook usage subscribers reconciled');
    await purgePublishedEvents(this.infra.pg);
  }
}
