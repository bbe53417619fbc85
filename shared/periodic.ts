import type { Logger } from './logging.js';

/**
 * Background work repeated on a timer (purges, reconciliations, housekeeping): runs once at `start()`, then
 * every `everyMs`; never two runs at once (a tick while one runs is skipped); a failure is logged and the
 * next tick tries again; the timer does not keep the process alive; `stop()` waits for a run in progress.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly opts: { name: string; everyMs: number; log: Logger; run: () => Promise<unknown> }) {}

  /** Starts the timer and the first run; the returned promise settles when that run ended (it never rejects). */
  start(): Promise<void> {
    this.timer ??= setInterval(() => void this.runNow(), this.opts.everyMs);
    this.timer.unref();
    return this.runNow();
  }

  /** Runs the task now unless a run is in progress (then waits for that one). */
  runNow(): Promise<void> {
    this.running ??= this.opts
      .run()
      .then(
        () => undefined,
        (err) =>
          this.opts.log.error({ err, task: this.opts.name }, `${this.opts.name} failed; retrying at the next tick`),
      )
      .finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
