/**
 * What follows a request body's arrival — parse, validation, the handler — runs in turns of about `turnMs`, between
 * which the event loop reads its sockets again. A request without a body (a GET: an entitlement check, a cached
 * read) is answered in the socket read that brings it, so it waits for about one turn, not for every body read in
 * the same pass: beside 100,000 records/s of ingest in the same api process a check's p99 went from 239–424 ms to
 * 63–94 ms (docs/benchmarks.md, "Entitlement checks"). Tasks run in arrival order.
 */
export class WorkTurns {
  private queue: (() => void)[] = [];
  private next = 0;
  private scheduled = false;

  constructor(private readonly turnMs = 2) {}

  /** Runs `task` in a turn, after the tasks before it. `task` must not throw: it answers its own request. */
  run(task: () => void): void {
    this.queue.push(task);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.turn);
    }
  }

  /** Tasks not started yet. */
  get waiting(): number {
    return this.queue.length - this.next;
  }

  private readonly turn = async (): Promise<void> => {
    const until = performance.now() + this.turnMs;
    while (this.next < this.queue.length) {
      try {
        this.queue[this.next++]!();
      } catch {
        // A task answers its own request and must not throw; if one did, the tasks after it still run.
      }
      // The task's own continuations (a handler's awaits) run before the clock is read: they are the turn's too.
      await null;
      if (performance.now() >= until) break;
    }
    if (this.next < this.queue.length) {
      setImmediate(this.turn); // after the event loop's next look at its sockets
      return;
    }
    this.queue = [];
    this.next = 0;
    this.scheduled = false;
  };
}
