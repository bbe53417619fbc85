import type { Logger } from './logging.js';
import type { Metrics } from './metrics.js';
import { PeriodicTask } from './periodic.js';

/**
 * Control-plane reads from memory (docs/architecture.md "Reads from memory"): each api process keeps what it
 * read of the resources that change rarely — products, meters, plans, coupons, tax rates, customers — and
 * answers again from memory, never staler than `maxStalenessMs` after the writer's 2xx on any process:
 *
 * - triggers bump a kind's version in the transaction of every change to its tables (migration 745), and a poll
 *   every `pollMs` clears the caches whose version moved; a poll that read a version ran after every change it
 *   covers committed;
 * - a cache answers from memory only while the last poll that succeeded *started* less than `maxStalenessMs`
 *   ago, so a change committed before that start has cleared it; past that (Postgres slow or down) every read
 *   goes to Postgres, as without a cache;
 * - a value loaded while its kind was cleared is not kept (it may predate the change);
 * - a write on this process clears every cache before its answer goes out (`clearAll`, the pipeline's step),
 *   so a client reading after its own write through the same process never waits for a poll.
 */
export const READ_KINDS = ['products', 'meters', 'plans', 'coupons', 'tax_rates', 'customers'] as const;
export type ReadKind = (typeof READ_KINDS)[number];

/** A kind's version per kind, as Postgres holds it now (a missing kind: absent). */
export type ReadVersions = ReadonlyMap<string, string>;

export interface ReadCacheOptions {
  pollMs?: number;
  maxStalenessMs?: number;
  /** Entries per kind; past it the oldest goes (the process's memory stays bounded whatever ids are read). */
  maxEntries?: number;
}

/** One kind's answers by key (a resource id, or the account and id where the answer depends on the caller). */
export class ReadCache<V> {
  private readonly entries = new Map<string, V>();
  private generation = 0;
  /** Answers from memory, and reads that went to Postgres (the metric `meterline_read_cache_reads`). */
  hits = 0;
  misses = 0;

  constructor(
    private readonly fresh: () => boolean,
    private readonly maxEntries: number,
  ) {}

  /** From memory while fresh; else `load()`, kept unless the kind changed while it ran. A failed load is not kept. */
  get(key: string, load: () => Promise<V>): V | Promise<V> {
    if (this.fresh()) {
      const hit = this.entries.get(key);
      if (hit !== undefined) {
        this.hits++;
        return hit;
      }
    }
    this.misses++;
    const generation = this.generation;
    return load().then((value) => {
      if (generation === this.generation && this.fresh()) this.keep(key, value);
      return value;
    });
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private keep(key: string, value: V): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, value);
  }
}

/** The api process's caches (one per kind) and the poll that keeps them current. */
export class ReadCaches {
  private readonly caches = new Map<ReadKind, ReadCache<string>>();
  private versions: ReadVersions | undefined;
  private confirmedAt = Number.NEGATIVE_INFINITY;
  private readonly task: PeriodicTask;
  private readonly opts: Required<ReadCacheOptions>;

  constructor(
    private readonly readVersions: () => Promise<ReadVersions>,
    deps: { log: Logger; metrics: Metrics },
    opts: ReadCacheOptions = {},
  ) {
    this.opts = { pollMs: 200, maxStalenessMs: 750, maxEntries: 10_000, ...opts };
    for (const kind of READ_KINDS) this.caches.set(kind, new ReadCache<string>(this.fresh, this.opts.maxEntries));
    this.task = new PeriodicTask({
      name: 'read cache poll',
      everyMs: this.opts.pollMs,
      log: deps.log,
      run: () => this.poll(),
    });
    deps.metrics.labelledGauge(
      'meterline_read_cache_reads',
      'Control-plane reads of a cached kind since the start, by kind and source: memory (answered from the process cache) or postgres (loaded)',
      ['kind', 'source'],
      (set) => {
        for (const [kind, cache] of this.caches) {
          set({ kind, source: 'memory' }, cache.hits);
          set({ kind, source: 'postgres' }, cache.misses);
        }
      },
    );
  }

  /** A kind's cache of serialized answers (the JSON text a route sends). */
  of(kind: ReadKind): ReadCache<string> {
    return this.caches.get(kind)!;
  }

  /** Resolves after the first poll was tried: until one succeeds every read goes to Postgres. */
  start(): Promise<void> {
    return this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** After a write on this process, before its answer goes out: every cache starts over. */
  clearAll(): void {
    for (const cache of this.caches.values()) cache.clear();
  }

  readonly fresh = (): boolean => performance.now() - this.confirmedAt <= this.opts.maxStalenessMs;

  private async poll(): Promise<void> {
    const started = performance.now();
    const now = await this.readVersions();
    for (const [kind, cache] of this.caches) {
      if (this.versions === undefined || this.versions.get(kind) !== now.get(kind)) cache.clear();
    }
    this.versions = now;
    this.confirmedAt = started;
  }
}
