import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '../../../shared/clients/nats.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import { UnavailableError } from '../../../shared/errors.js';
import {
  customerShard,
  encodeShard,
  shardKey,
  shardOfKey,
  type CustomerEntry,
} from '../../../shared/customers/shards.js';
import { lockRegistryShard, registryRowsOfShards, registryShardRows, type RegistryRow } from './registry-store.js';

/** Shards whose Postgres rows one reconciliation query reads. */
const RECONCILE_SHARDS_PER_QUERY = 512;

const toEntry = (r: RegistryRow): CustomerEntry => ({
  accountId: r.id,
  customerId: r.customer_id,
  externalId: r.external_id,
});

/**
 * The control plane's side of the customer registry (shared/customers/): Postgres is the truth, the NATS KV
 * customer bucket — one entry per shard of the account ids — the copy every api process holds in memory.
 *
 * A writer changes an account row inside its transaction, then calls `write()` before COMMIT: under the shard's
 * advisory lock it reads the shard's rows (its own change included) and puts the whole entry, so the writers of
 * one shard put in commit order and the last put holds every committed change. A KV failure rolls the change
 * back (503); once the 201/200 is sent every api can find the customer. A commit that fails after its put leaves
 * KV saying something Postgres doesn't: `reconcile()` repairs that, under the same lock, on start and
 * periodically (as the meter registry does).
 */
export class CustomerRegistryWriter {
  private constructor(
    readonly kv: KV,
    private readonly log: Logger | undefined,
  ) {}

  static async open(nats: NatsConnection, bucket: string, log?: Logger): Promise<CustomerRegistryWriter> {
    return new CustomerRegistryWriter(await new Kvm(nats).open(bucket), log);
  }

  /** Inside the caller's transaction, after its change to `accountId`'s row: rewrites the account's shard entry. */
  async write(client: PgClient, accountId: string): Promise<void> {
    const shard = customerShard(accountId);
    await lockRegistryShard(client, shard);
    await this.putShard(shard, await registryShardRows(client, shard));
  }

  private async putShard(shard: number, rows: RegistryRow[]): Promise<void> {
    try {
      if (rows.length) await this.kv.put(shardKey(shard), encodeShard(rows.map(toEntry)));
      else await this.kv.delete(shardKey(shard));
    } catch (err) {
      this.log?.error({ err, shard }, 'customer registry write failed');
      throw new UnavailableError('The customer registry (NATS) did not acknowledge the change; nothing was changed.');
    }
  }

  /**
   * Makes every shard entry equal to Postgres: reads the rows a range of shards at a time, compares each with
   * its entry, and rewrites the ones that differ under the shard's lock (so a write in flight is never undone).
   */
  async reconcile(pg: PgPool): Promise<{ checked: number; repaired: number }> {
    const stats = { checked: 0, repaired: 0 };
    const inKv = new Set<number>();
    for await (const k of await this.kv.keys()) {
      const s = shardOfKey(k);
      if (s !== undefined) inKv.add(s);
    }
    for (let from = 0; from < 65_536; from += RECONCILE_SHARDS_PER_QUERY) {
      const to = from + RECONCILE_SHARDS_PER_QUERY;
      const rows = await registryRowsOfShards(pg, from, to);
      const byShard = new Map<number, RegistryRow[]>();
      for (const r of rows) {
        const list = byShard.get(r.shard);
        if (list) list.push(r);
        else byShard.set(r.shard, [r]);
      }
      for (let s = from; s < to; s++) if (inKv.has(s) && !byShard.has(s)) byShard.set(s, []);
      for (const [shard, expected] of byShard) {
        stats.checked++;
        if ((await this.current(shard)) === expectedText(expected)) continue;
        if (await this.repair(pg, shard)) stats.repaired++;
      }
    }
    if (stats.repaired) this.log?.warn(stats, 'customer registry reconciled');
    return stats;
  }

  /** Under the shard's lock: rewrites its entry from Postgres. True if KV changed. */
  private async repair(pg: PgPool, shard: number): Promise<boolean> {
    return withTransaction(pg, async (c) => {
      await lockRegistryShard(c, shard);
      const rows = await registryShardRows(c, shard);
      if ((await this.current(shard)) === expectedText(rows)) return false;
      await this.putShard(shard, rows);
      return true;
    });
  }

  /** The shard's entry as stored; '' when there is none. */
  private async current(shard: number): Promise<string> {
    const e = await this.kv.get(shardKey(shard));
    return e && e.operation === 'PUT' ? e.string() : '';
  }
}

const expectedText = (rows: RegistryRow[]) => (rows.length ? encodeShard(rows.map(toEntry)) : '');
