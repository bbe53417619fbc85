/** What the registry needs of a body being read (shared/http/body.ts). */
export interface OverdueRead {
  readonly startedAt: number;
  /** Fails the read with 408 if it has not completed. */
  expire(): void;
}

/**
 * The request bodies still arriving in one process: each must be complete within BODY_READ_TIMEOUT_SECONDS of
 * the request's arrival, else it is answered 408 and its bytes released (one sweep a fraction of the deadline,
 * instead of a timer per request). Counts what failed and why, for /metrics.
 */
export class BodyReads {
  private readonly open = new Set<OverdueRead>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly onFailure: (reason: string) => void = () => undefined,
  ) {}

  /** Bodies still arriving. */
  get count(): number {
    return this.open.size;
  }

  add(read: OverdueRead): void {
    this.open.add(read);
  }

  delete(read: OverdueRead): void {
    this.open.delete(read);
  }

  /** A read ended without its body: `reason` is the error code (request_aborted, request_timeout, overloaded…). */
  failed(reason: string): void {
    this.onFailure(reason);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(), Math.min(1_000, Math.max(50, this.timeoutMs / 4)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Expires every read older than the deadline. */
  sweep(now = performance.now()): void {
    for (const read of this.open) if (now - read.startedAt >= this.timeoutMs) read.expire();
  }
}
