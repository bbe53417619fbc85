import type { Logger } from './logging.js';
import { withoutAuditActor } from './audit/actor.js';

/**
 * Background work repeated on a timer (purges, reconciliations, housekeeping, rollups): runs once at `start()`,
 * then every `everyMs` — or, with `gap`, `everyMs` after each run ended (work whose runs may take longer than the
 * interval then never runs back to back); never two runs at once (a tick while one runs is skipped); a failure is
 * logged (or handed to `failed`) and the next tick tries again; the timer does not keep the process alive; `stop()` waits for a run
 * in progress. `problem()` names a failure that has lasted: for a component's health.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastError: string | undefined;
  private failingSince: number | undefined;
  /** Between start() and stop(): only then does a gap task arm its next run. */
  private started = false;

  constructor(
    private readonly opts: {
      name: string;
      everyMs: number;
      /** Where failures are logged (none: nowhere; `failed` may say them instead). */
      log?: Logger;
      run: () => Promise<unknown>;
      /** Told of each failed run instead of the default error log. */
      failed?: (err: unknown) => void;
      /** The interval counts from the end of each run, not from its start. */
      gap?: boolean;
    },
  ) {}

  /** Starts the timer and the first run; the returned promise settles when that run ended (it never rejects). */
  start(): Promise<void> {
    this.started = true;
    if (!this.opts.gap) {
      this.timer ??= setInterval(() => void this.runNow(), this.opts.everyMs);
      this.timer.unref();
    }
    return this.runNow();
  }

  /** Runs the task now unless a run is in progress (then waits for that one). */
  runNow(): Promise<void> {
    // As no one: a task started during a write request would otherwise log its changes as that request's forever.
    this.running ??= withoutAuditActor(() => this.opts.run())
      .then(
        () => {
          this.lastError = undefined;
          this.failingSince = undefined;
        },
        (err) => {
          this.lastError = (err as Error)?.message ?? String(err);
          this.failingSince ??= Date.now();
          if (this.opts.failed) this.opts.failed(err);
          else
            this.opts.log?.error({ err, task: this.opts.name }, `${this.opts.name} failed; retrying at the next tick`);
        },
      )
      .finally(() => {
        this.running = undefined;
        if (this.opts.gap && this.started) {
          clearTimeout(this.timer);
          this.timer = setTimeout(() => void this.runNow(), this.opts.everyMs).unref();
        }
      });
    return this.running;
  }

  /** The last failure, once runs have failed for longer than `forMs` without a success between. */
  problem(forMs: number, now = Date.now()): string | undefined {
    return this.failingSince !== undefined && now - this.failingSince > forMs ? this.lastError : undefined;
  }

  async stop(): Promise<void> {
    this.started = false;
    clearInterval(this.timer); // clears a timeout too
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
