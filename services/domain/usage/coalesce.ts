/**
 * Identical reads in flight at the same moment share one computation: a dashboard polled by many clients,
 * or 64 connections asking for the same meter, cost one ClickHouse query per round instead of one each.
 * A joining caller gets an answer computed from a snapshot taken at most one query-duration before it
 * asked — usage reads are asynchronous to ingest anyway (docs/design.md §11: visible within 2 s), so no answer is
 * older than that bound allows. Nothing is kept once the computation settles: this is not a cache.
 */
export class ReadCoalescer<T> {
  private readonly inflight = new Map<string, Promise<T>>();

  run(key: string, compute: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(key);
    if (running) return running;
    const p = compute().finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }
}
