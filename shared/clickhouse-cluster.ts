/**
 * ClickHouse as a cluster (CLICKHOUSE_CLUSTER set; docs/operations.md "Running on more than one machine"): the same
 * migration files, turned statement by statement into steps the migration runner applies host by host
 * (shared/migrate-cluster.ts), so a column a migration adds reaches the cluster too.
 *
 * - A table with an `account_id` column is sharded by account: `<table>_local` (Replicated…MergeTree, one
 *   copy per replica of each shard) plus `<table>` (Distributed over the locals, the name every reader
 *   already uses). Writers insert into the account's shard's local table (shared/clients/usage-shards.ts) with the
 *   same routing the Distributed sharding key computes, so every copy of a record id lands on one shard and
 *   ReplacingMergeTree there keeps deduplicating.
 * - Any other table (watermarks, the migration log) is replicated on every node under one ZooKeeper path.
 * - Materialized views read and write the local tables: each replica rolls up what was inserted into it.
 * No step is sent ON CLUSTER: ClickHouse 18.16's DDL queue lost hosts' answers (issue 50), so the runner talks to
 * each host itself and checks the schema before and after. Without a cluster the statements run unchanged.
 */
import { createHash } from 'node:crypto';

export const LOCAL_SUFFIX = '_local';

/** The shard key of the Distributed tables; `shardIndex` computes the same in JS (first 4 bytes of MD5, little-endian). */
export const SHARDING_KEY_SQL = 'reinterpretAsUInt32(substring(MD5(account_id), 1, 4))';

/** The 0-based shard (in remote_servers order) that holds an account's rows. */
export function shardIndex(accountId: string, shards: number): number {
  return createHash('md5').update(accountId).digest().readUInt32LE(0) % shards;
}

/** A column an ALTER adds: its name and its definition as written (`Array(String)`, `UInt8 DEFAULT 1`). */
export interface ColumnDef {
  name: string;
  definition: string;
}

/** One step of a migration on the cluster (shared/migrate-cluster.ts applies it). */
export type ClusterStep =
  /** A table or view made on every host that lacks it (each replica of a replicated table registers itself). */
  | { kind: 'create'; db: string; table: string; sql: string }
  /**
   * Columns added to / dropped from a table: on one replica of each replicated table's ZooKeeper path (replication
   * carries it to the others), on every host for a table that is not replicated (a Distributed one).
   */
  | { kind: 'alter'; db: string; table: string; add: ColumnDef[]; drop: string[] }
  /** A table dropped on every host that has it. */
  | { kind: 'drop'; db: string; table: string }
  /** A data statement, run once through one host's Distributed tables. */
  | { kind: 'data'; sql: string };

const CREATE_TABLE =
  /^CREATE TABLE IF NOT EXISTS (\w+)\.(\w+)\s*\(([\s\S]*?)\)\s*ENGINE\s*=\s*(\w*MergeTree)\(([^)]*)\)([\s\S]*)$/i;
const CREATE_VIEW = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+)\.(\w+) TO (\w+)\.(\w+) AS([\s\S]*)$/i;
const ALTER_TABLE = /^ALTER TABLE (\w+)\.(\w+)\s([\s\S]*)$/i;
const DROP_TABLE = /^DROP TABLE IF EXISTS (\w+)\.(\w+)$/i;
const ADD_COLUMN = /^ADD COLUMN (\w+)\s+([\s\S]+)$/i;
const DROP_COLUMN = /^DROP COLUMN (\w+)$/i;
const PASS_THROUGH = /^(SELECT|INSERT)\s/i;

/** The ADD COLUMN / DROP COLUMN clauses of an ALTER (the only changes a migration makes: docs/upgrades.md). */
function alterClauses(change: string, statement: string): { add: ColumnDef[]; drop: string[] } {
  const add: ColumnDef[] = [];
  const drop: string[] = [];
  for (const clause of change.trim().split(/,\s*(?=(?:ADD|DROP) COLUMN\s)/i)) {
    const a = ADD_COLUMN.exec(clause.trim());
    const d = DROP_COLUMN.exec(clause.trim());
    if (a) add.push({ name: a[1]!, definition: a[2]!.trim() });
    else if (d) drop.push(d[1]!);
    else
      throw new Error(
        `no cluster form for this ALTER clause (ADD COLUMN and DROP COLUMN have one): ${statement.slice(0, 120)}`,
      );
  }
  return { add, drop };
}

/** Turns migration statements into cluster steps; `sharded` collects the sharded tables' names as it goes. */
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

  private distributed(db: string, table: string): ClusterStep {
    const local = table + LOCAL_SUFFIX;
    return {
      kind: 'create',
      db,
      table,
      sql: `CREATE TABLE IF NOT EXISTS ${db}.${table} AS ${db}.${local} ENGINE = Distributed(${this.cluster}, ${db}, ${local}, ${SHARDING_KEY_SQL})`,
    };
  }

  /** Steps to apply instead of `statement` on the cluster. */
  rewrite(statement: string): ClusterStep[] {
    let m = CREATE_TABLE.exec(statement);
    if (m) {
      const [, db, table, columns, engine, args, rest] = m as unknown as string[];
      const byAccount = /(^|[\s,(])account_id\s/.test(columns!);
      const args2 = args!.trim() ? `, ${args!.trim()}` : '';
      if (!byAccount) {
        const path = `'/clickhouse/tables/all/${db}/${table}'`;
        const sql = `CREATE TABLE IF NOT EXISTS ${db}.${table} (${columns}) ENGINE = Replicated${engine}(${path}, '{replica}'${args2})${rest}`;
        return [{ kind: 'create', db: db!, table: table!, sql }];
      }
      this.sharded.add(table!);
      const local = table + LOCAL_SUFFIX;
      const path = `'/clickhouse/tables/{shard}/${db}/${local}'`;
      const sql = `CREATE TABLE IF NOT EXISTS ${db}.${local} (${columns}) ENGINE = Replicated${engine}(${path}, '{replica}'${args2})${rest}`;
      return [{ kind: 'create', db: db!, table: local, sql }, this.distributed(db!, table!)];
    }
    m = CREATE_VIEW.exec(statement);
    if (m) {
      const [, db, view, targetDb, target, select] = m as unknown as string[];
      const localSelect = select!.replace(
        new RegExp(`\\b${db}\\.(\\w+)`, 'g'),
        (_s, t: string) => `${db}.${this.local(t)}`,
      );
      const sql = `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${view} TO ${targetDb}.${this.local(target!)} AS${localSelect}`;
      return [{ kind: 'create', db: db!, table: view!, sql }];
    }
    m = ALTER_TABLE.exec(statement);
    if (m) {
      const [, db, table, change] = m as unknown as string[];
      const { add, drop } = alterClauses(change!, statement);
      const local: ClusterStep = { kind: 'alter', db: db!, table: this.local(table!), add, drop };
      if (!this.sharded.has(table!)) return [local];
      // The Distributed table lists the columns too (18.16 alters a Distributed table's columns in place, on each
      // host): a column is added below it first and dropped from it first, so its readers never name a missing one.
      const dist: ClusterStep = { kind: 'alter', db: db!, table: table!, add, drop };
      if (add.length && drop.length)
        return [
          { ...dist, add: [] },
          { ...local, add: [] },
          { ...local, drop: [] },
          { ...dist, drop: [] },
        ];
      return drop.length ? [dist, local] : [local, dist];
    }
    m = DROP_TABLE.exec(statement);
    if (m) {
      const [, db, table] = m as unknown as string[];
      if (!this.sharded.has(table!)) return [{ kind: 'drop', db: db!, table: table! }];
      return [
        { kind: 'drop', db: db!, table: table! },
        { kind: 'drop', db: db!, table: table + LOCAL_SUFFIX },
      ];
    }
    // Data statements go through the Distributed tables (synchronously: see migrate-cluster.ts).
    if (PASS_THROUGH.test(statement)) return [{ kind: 'data', sql: statement }];
    throw new Error(
      `no cluster form for this migration statement (add one in shared/clickhouse-cluster.ts): ${statement.slice(0, 120)}`,
    );
  }
}
