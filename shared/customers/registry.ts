import type { KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection, NatsNames } from '../clients/nats.js';
import type { Logger } from '../logging.js';
import { KvMirror } from '../kv-mirror.js';
import { UnavailableError } from '../errors.js';
import { CustomerTable } from './table.js';
import { decodeShard, shardOfKey } from './shards.js';

/**
 * Every customer, replicated into memory from the NATS KV customer bucket by a watch (like the meter
 * registry): an attributed record finds its customer's account without a network hop, and a customer created
 * over the API reaches every api process within milliseconds of its shard entry being written. start()
 * resolves once the bucket's current content is loaded, so an api never listens with an empty registry.
 */
export class CustomerRegistry {
  readonly table = new CustomerTable();
  private mirror: KvMirror | undefined;
  private ready = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly names: NatsNames,
    private readonly log: Logger,
    /** As the meter registry's (WATCH_MAX_STALENESS_SECONDS): past it, attributed ingest answers 503. */
    private readonly maxStalenessMs = 10_000,
  ) {}

  get size(): number {
    return this.table.size;
  }

  /** 503 unless the copy is known current: a record must not be refused as `unknown_customer` by a stale copy. */
  assertCurrent(): void {
    if (!this.mirror?.fresh)
      throw new UnavailableError('The customer registry cannot be confirmed current right now; retry shortly.', 2);
  }

  health(): { ok: boolean; detail?: string } {
    if (!this.ready) return { ok: false, detail: 'customer registry not loaded' };
    return this.mirror?.health() ?? { ok: false, detail: 'customer registry not started' };
  }

  async start(timeoutMs = 60_000): Promise<void> {
    this.mirror = new KvMirror(this.nc, this.names.customerBucket, {
      name: 'customer registry',
      apply: (e) => this.apply(e),
      maxStalenessMs: this.maxStalenessMs,
      log: this.log,
    });
    await this.mirror.start(timeoutMs);
    this.ready = true;
    this.log.info({ customers: this.table.size }, 'customer registry loaded');
  }

  private apply(e: KvWatchEntry): void {
    const shard = shardOfKey(e.key);
    if (shard === undefined) return;
    if (e.operation !== 'PUT') {
      this.table.applyShard(shard, []);
      return;
    }
    const entries = decodeShard(e.string());
    if (!entries) {
      this.log.warn({ key: e.key }, 'customer registry: ignoring an undecodable shard entry');
      return;
    }
    this.table.applyShard(shard, entries);
  }

  async stop(): Promise<void> {
    await this.mirror?.stop();
  }
}
