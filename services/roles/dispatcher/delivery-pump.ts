import type { Logger } from '../../../shared/logging.js';
import { CoalescedPass } from '../../../shared/periodic.js';

/**
 * The loop of a queue in Postgres that the dispatcher empties (invoice emails, webhook attempts, the outbox): a pass
 * claims what is due and sends it; passes run at start, on wake() (work committed, a send finished, a NOTIFY) and
 * every `pollIntervalMs` (retries come due, another process's lease ran out, a wake was missed); never two at once —
 * a wake during a pass asks for one more after it. A failed pass is logged and named by the component's health until
 * the owner says it is past (`clear()`, after its next successful claim); nothing starts once stopped.
 */
export class DeliveryPump {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private lastError: string | undefined;
  private readonly passes: CoalescedPass;

  constructor(
    private readonly opts: {
      /** The component, in logs ("mail delivery"). */
      name: string;
      /** What a failed pass is called, in health and logs ("claiming due emails failed"). */
      failure: string;
      pollIntervalMs: number;
      log: Logger;
      pass: () => Promise<void>;
    },
  ) {
    this.passes = new CoalescedPass(
      opts.pass,
      (err) => {
        this.report(`${opts.failure}: ${(err as Error).message}`);
        opts.log.warn({ err }, `${opts.name}: ${opts.failure}; retrying on the next poll`);
      },
      () => !this.stopped,
    );
  }

  /** Whether the pump is stopped (a pass in progress ends early when it is). */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Starts the poll and the first pass. */
  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.opts.pollIntervalMs);
    this.timer.unref();
    this.wake();
  }

  /** Claims and sends what is due, unless a pass is running (then one more pass follows it). */
  wake(): void {
    this.passes.wake();
  }

  /** Stops polling and waits for the pass in progress; false when it was not running. */
  async stop(): Promise<boolean> {
    if (this.stopped) return false;
    this.stopped = true;
    clearInterval(this.timer);
    await this.passes.current;
    return true;
  }

  /** A problem the component's health names until clear(). */
  report(problem: string): void {
    this.lastError = problem;
  }

  clear(): void {
    this.lastError = undefined;
  }

  health(): { ok: boolean; detail?: string } {
    return this.lastError ? { ok: false, detail: this.lastError } : { ok: true };
  }
}
