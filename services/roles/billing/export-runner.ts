import type { Infra } from '../../../shared/infra.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import type { Component } from '../role.js';
import { addScheduledExports, runDueExports } from '../../domain/exports/run.js';
import { EXPORT_SETTLE_MS } from '../../domain/exports/schedules.js';

/** How often the runner looks for exports to write and schedule windows that ended. */
const EVERY_MS = 2_000;

/**
 * The billing role's export runner (docs/exports.md): adds each schedule's windows that ended, then writes every
 * export due, one at a time. Several billing processes may run it: each export is claimed by one.
 */
export class ExportRunner implements Component {
  readonly name = 'export-runner';
  private task: PeriodicTask | undefined;
  private lastError: string | undefined;

  constructor(private readonly infra: Infra) {}

  async start(): Promise<void> {
    const { pg, clickhouse, config } = this.infra;
    const deps = {
      pg,
      clickhouse,
      database: config.CLICKHOUSE_DATABASE,
      config,
      failed: (id: string, err: unknown) => this.infra.log.warn({ err, export_id: id }, 'export failed; retried'),
    };
    this.task = new PeriodicTask({
      name: 'exports',
      everyMs: EVERY_MS,
      gap: true,
      log: this.infra.log,
      run: async () => {
        try {
          await addScheduledExports(pg, new Date(), EXPORT_SETTLE_MS);
          await runDueExports(deps);
          this.lastError = undefined;
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
    return this.lastError ? { ok: false, detail: `last export pass failed: ${this.lastError}` } : { ok: true };
  }
}
