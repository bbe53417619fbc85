/**
 * ClickHouse as a cluster (CLICKHOUSE_CLUSTER set; docs/operations.md "Running on more than one machine"): the same
 * migration files, rewritten statement by statement, so a column a migration adds reaches the cluster too.
 *
 * - A table with an `account_id` column is sharded by account: `<table>_local` (Replicated…MergeTree, one
 *   copy per replica of each shard) plus `<table>` (Distributed over the locals, the name every reader
 *   already uses). Writers insert into the account's shard's local table (shared/usage/shards.ts) with the
 *   same routing the Distributed sharding key computes, so every copy of a record id lands on one shard and
 *   ReplacingMergeTree there keeps deduplicating.
 * - Any other table (watermarks, the migration log) is replicated on every node under one ZooKeeper path.
 * - Materialized views read and write the local tables: each replica rolls up what was inserted into it.
 * Every statement runs ON CLUSTER. Without a cluster the statements run unchanged.
 */
import { createHash } from 'node:crypto';

export const LOCAL_SUFFIX = '_local';

/** The shard key of the Distributed tables; `shardIndex` computes the same in JS (first 4 bytes of MD5, little-endian). */
export const SHARDING_KEY_SQL = 'reinterpretAsUInt32(substring(MD5(account_id), 1, 4))';

/** The 0-based shard (in remote_servers order) that holds an account's rows. */
export function shardIndex(accountId: string, shards: number): number {
  return createHash('md5').update(accountId).digest().readUInt32LE(0) % shards;
}

const CREATE_TABLE =
  /^CREATE TABLE IF NOT EXISTS (\w+)\.(\w+)\s*\(([\s\S]*?)\)\s*ENGINE\s*=\s*(\w*MergeTree)\(([^)]*)\)([\s\S]*)$/i;
const CREATE_VIEW = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)\.(\w+) TO (\w+)\.(\w+) AS([\s\S]*)$/i;
const ALTER_TABLE = /^ALTER TABLE (\w+)\.(\w+)\s([\s\S]*)$/i;
const PASS_THROUGH = /^(SELECT|INSERT)\s/i;

/** Rewrites migration statements for `cluster`; `sharded` collects the sharded tables' names as it goes. */
export class ClusterDdl {
  /** Tables split by account (local + Distributed), by name; filled by earlier statements and `knownSharded`. */
  private readonly sharded = new Set<string>();

  constructor(
    readonly cluster: string,
    knownSharded: Iterable<string> = [],
  ) {
    for (const t of knownSharded) this.sharded.add(t);
  }

  /** The local table behind `table` (itself for a table replicated everywhere). */
  local(table: string): string {
    return this.sharded.has(table) ? table + LOCAL_SUFFIX : table;
  }

  private distributed(db: string, table: string): string {
    const local = table + LOCAL_SUFFIX;
    return `CREATE TABLE IF NOT EXISTS ${db}.${table} ON CLUSTER ${this.cluster} AS ${db}.${local} ENGINE = Distributed(${this.cluster}, ${db}, ${local}, ${SHARDING_KEY_SQL})`;
  }

  /** Statements to run instead of `statement` on the cluster. */
  rewrite(statement: string): string[] {
    const on = `ON CLUSTER ${this.cluster}`;
    let m = CREATE_TABLE.exec(statement);
    if (m) {
      const [, db, table, columns, engine, args, rest] = m as unknown as string[];
      const byAccount = /(^|[\s,(])account_id\s/.test(columns!);
      const args2 = args!.trim() ? `, ${args!.trim()}` : '';
      if (!byAccount) {
        const path = `'/clickhouse/tables/all/${db}/${table}'`;
        return [
          `CREATE TABLE IF NOT EXISTS ${db}.${table} ${on} (${columns}) ENGINE = Replicated${engine}(${path}, '{replica}'${args2})${rest}`,
        ];
      }
      this.sharded.add(table!);
      const local = table + LOCAL_SUFFIX;
      const path = `'/clickhouse/tables/{shard}/${db}/${local}'`;
      return [
        `CREATE TABLE IF NOT EXISTS ${db}.${local} ${on} (${columns}) ENGINE = Replicated${engine}(${path}, '{replica}'${args2})${rest}`,
        this.distributed(db!, table!),
      ];
    }
    m = CREATE_VIEW.exec(statement);
    if (m) {
      const [, db, view, targetDb, target, select] = m as unknown as string[];
      const localSelect = select!.replace(
        new RegExp(`\\b${db}\\.(\\w+)`, 'g'),
        (_s, t: string) => `${db}.${this.local(t)}`,
      );
      return [
        `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${view} ${on} TO ${targetDb}.${this.local(target!)} AS${localSelect}`,
      ];
    }
    m = ALTER_TABLE.exec(statement);
    if (m) {
      const [, db, table, change] = m as unknown as string[];
      const out = [`ALTER TABLE ${db}.${this.local(table!)} ${on} ${change}`];
      // The Distributed table lists the columns too. 18.16 refuses ALTER … ON CLUSTER of a table that is not
      // replicated on a replicated cluster; it holds no data, so it is made again from the altered local table.
      if (this.sharded.has(table!))
        out.push(`DROP TABLE IF EXISTS ${db}.${table} ${on}`, this.distributed(db!, table!));
      return out;
    }
    // Data statements go through the Distributed tables (synchronously: see migrate.ts).
    if (PASS_THROUGH.test(statement)) return [statement];
    throw new Error(
      `no cluster form for this migration statement (add one in shared/clickhouse-cluster.ts): ${statement.slice(0, 120)}`,
    );
  }
}
