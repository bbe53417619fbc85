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

/**
 * A pass run on demand, one at a time (a delivery queue's claim-and-send): a wake() while a pass runs asks for
 * one more pass after it, however many wakes came meanwhile, so nothing woken for is left waiting for the next
 * poll. A failed pass goes to `failed`; the next wake tries again. Nothing starts once `enabled()` is false.
 */
export class CoalescedPass {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly failed: (err: unknown) => void,
    private readonly enabled: () => boolean = () => true,
  ) {}

  wake(): void {
    if (!this.enabled()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch(this.failed)
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** The pass in progress, if any: what a stop waits for. */
  get current(): Promise<void> | null {
    return this.running;
  }
}
