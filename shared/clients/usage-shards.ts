/**
 * Where usage rows are written: the one ClickHouse server, or — with CLICKHOUSE_CLUSTER — the replicas of
 * the shard that owns the account (shared/clickhouse-cluster.ts), straight into its local tables. A write
 * returns when that shard's replica has the rows, never on a Distributed table's asynchronous forwarding,
 * so the consumer acks only what a shard holds.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { ClickhouseReplicas, clickhouseUrls, isConnectionError, type ClickhouseClientOptions } from './clickhouse.js';
import { LOCAL_SUFFIX, shardIndex } from '../clickhouse-cluster.js';
import type { Config } from '../config.js';

export interface UsageShard {
  /** 0-based, in the cluster's remote_servers order. */
  index: number;
  replicas: ClickhouseReplicas;
  /** Suffix of the account-keyed tables' names on the shard: '' on one server, '_local' on a cluster. */
  local: string;
  /** Waits until this replica holds every part its twins have (before a recompute that must see them all). */
  syncReplica(table: string): Promise<void>;
  /**
   * Waits until every reachable replica of the shard holds every part of `table`: after a write a reader must
   * see at once (a correction's 201), since a Distributed read may be served by any replica. A replica that
   * cannot be reached serves no reads; it catches up when it comes back.
   */
  syncEveryReplica(table: string): Promise<void>;
}

export class UsageShards {
  private constructor(readonly shards: UsageShard[]) {}

  /** The shard owning an account's rows. */
  of(accountId: string): UsageShard {
    return this.shards.length === 1 ? this.shards[0]! : this.shards[shardIndex(accountId, this.shards.length)]!;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.shards.map((s) => s.replicas.close()));
  }

  /**
   * One shard (every URL a replica of it) without a cluster; with one, each URL's `shard` macro says which
   * shard it serves (the launcher sets it to the shard's number in remote_servers). Replicas that do not
   * answer now are left out of this process; a shard none of whose replicas answers is an error.
   */
  static async open(
    config: Pick<Config, 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'CLICKHOUSE_CLUSTER'>,
    o: ClickhouseClientOptions = {},
  ): Promise<UsageShards> {
    const urls = clickhouseUrls(config.CLICKHOUSE_URL);
    const db = config.CLICKHOUSE_DATABASE;
    const cluster = config.CLICKHOUSE_CLUSTER;
    if (!cluster) return new UsageShards([shard(0, new ClickhouseReplicas(urls, db, o), db, '')]);
    const probe = new ClickhouseReplicas(urls, db, { quiet: true });
    try {
      const count = await probe.run(async (ch) => {
        const rs = await ch.query({
          query: `SELECT uniqExact(shard_num) AS n FROM system.clusters WHERE cluster = '${cluster}'`,
          format: 'JSONEachRow',
        });
        return Number((await rs.json<{ n: string }>())[0]?.n ?? 0);
      });
      if (count === 0) throw new Error(`ClickHouse knows no cluster "${cluster}" (CLICKHOUSE_CLUSTER)`);
      const shardOf = await Promise.all(
        probe.clients.map(async (ch) => {
          try {
            const rs = await ch.query({
              query: `SELECT substitution AS s FROM system.macros WHERE macro = 'shard'`,
              format: 'JSONEachRow',
            });
            return Number((await rs.json<{ s: string }>())[0]?.s);
          } catch {
            return NaN; // unreachable now
          }
        }),
      );
      const out: UsageShard[] = [];
      for (let i = 0; i < count; i++) {
        const mine = urls.filter((_u, j) => shardOf[j] === i + 1);
        if (mine.length === 0)
          throw new Error(`no replica of ClickHouse shard ${i + 1} of ${count} answers among CLICKHOUSE_URL`);
        out.push(shard(i, new ClickhouseReplicas(mine, db, o), db, LOCAL_SUFFIX));
      }
      return new UsageShards(out);
    } finally {
      await probe.close();
    }
  }
}

/** How long a sweep waits for a replica to catch up before it gives up (and is retried later). */
const SYNC_REPLICA_TIMEOUT_S = 20;

function syncReplica(ch: ClickHouseClient, database: string, table: string): Promise<unknown> {
  return ch.command({
    query: `SYSTEM SYNC REPLICA ${database}.${table}`,
    clickhouse_settings: { receive_timeout: SYNC_REPLICA_TIMEOUT_S },
  });
}

function shard(index: number, replicas: ClickhouseReplicas, database: string, local: string): UsageShard {
  return {
    index,
    replicas,
    local,
    syncReplica: async (name) => {
      if (!local) return;
      await replicas.run((ch) => syncReplica(ch, database, name + local));
    },
    syncEveryReplica: async (name) => {
      if (!local) return;
      await Promise.all(
        replicas.clients.map((ch) =>
          syncReplica(ch, database, name + local).catch((err) => {
            if (!isConnectionError(err)) throw err;
          }),
        ),
      );
    },
  };
}
