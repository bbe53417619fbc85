/**
 * ClickHouse migrations on a cluster (CLICKHOUSE_CLUSTER), host by host, never ON CLUSTER: 18.16's DDL queue left
 * a host's ALTER unanswered until distributed_ddl_task_timeout, over and over (issue 50). Each migration statement
 * becomes steps (shared/clickhouse-cluster.ts), and each step looks at the schema first and is skipped where its
 * effect is already there, then checks it after:
 * - create: on every host without the table (`system.tables`), first on one host then on the others (the first
 *   makes a replicated table's ZooKeeper node, the others only add their replica);
 * - alter: per replicated table's ZooKeeper path, on one replica, with only the columns the path's shared column
 *   list lacks; replication carries it to the twins, which must show it in `system.columns` within SETTLE_MS —
 *   a replica that does not is named with its replication state. A table that is not replicated (Distributed) is
 *   altered on each host that lacks the columns;
 * - drop: on every host that has the table; data: once, through one host's Distributed tables.
 * Every step is idempotent, and a version is recorded only after all its steps, so a run killed anywhere finishes on
 * the next `meterline migrate`.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { ClusterDdl, type ClusterStep } from './clickhouse-cluster.js';
import { ClusterHosts, HostError, selectRows, type ClickhouseHost } from './clickhouse-hosts.js';
import { clickhouseMigrations, sqlStatements } from './migration-files.js';

/** How long a replica may take to show a column change its twin made (replication through ZooKeeper). */
export const SETTLE_MS = 60_000;
/** One DDL request: a CREATE or an ALTER answers in well under a second on a healthy host. */
const REQUEST_TIMEOUT_MS = 120_000;

const quoted = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

async function tableExists(client: ClickHouseClient, db: string, table: string): Promise<boolean> {
  const rows = await selectRows<{ n: string }>(
    client,
    `SELECT count() AS n FROM system.tables WHERE database = ${quoted(db)} AND name = ${quoted(table)}`,
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

async function columnsOf(client: ClickHouseClient, db: string, table: string): Promise<Set<string>> {
  const rows = await selectRows<{ name: string }>(
    client,
    `SELECT name FROM system.columns WHERE database = ${quoted(db)} AND table = ${quoted(table)}`,
  );
  return new Set(rows.map((r) => r.name));
}

interface ReplicaState {
  zookeeper_path: string;
  is_readonly: number;
  is_session_expired: number;
  queue_size: number;
  active_replicas: number;
  total_replicas: number;
}

async function replicaState(client: ClickHouseClient, db: string, table: string): Promise<ReplicaState | undefined> {
  const rows = await selectRows<ReplicaState>(
    client,
    `SELECT zookeeper_path, is_readonly, is_session_expired, queue_size, active_replicas, total_replicas FROM system.replicas WHERE database = ${quoted(db)} AND table = ${quoted(table)}`,
  );
  return rows[0];
}

/** The columns a replicated table's replicas share: ZooKeeper's `columns` node at its path (what an ALTER changes first). */
async function sharedColumns(client: ClickHouseClient, path: string): Promise<Set<string>> {
  const rows = await selectRows<{ value: string }>(
    client,
    `SELECT value FROM system.zookeeper WHERE path = ${quoted(path)} AND name = 'columns'`,
  );
  return new Set([...(rows[0]?.value ?? '').matchAll(/^`((?:[^`\\]|\\.)+)`/gm)].map((m) => m[1]!));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A replica that did not show a change within SETTLE_MS: reported, never retried (applyStep). */
class NotApplied extends Error {}

/** A replica that changed nothing by itself is named with what ClickHouse says of its replication. */
function describe(state: ReplicaState | undefined): string {
  if (!state) return 'not a replicated table';
  return `is_readonly=${state.is_readonly} (1: no ZooKeeper session), is_session_expired=${state.is_session_expired}, queue_size=${state.queue_size}, ${state.active_replicas} of ${state.total_replicas} replicas active`;
}

async function create(hosts: ClusterHosts, step: Extract<ClusterStep, { kind: 'create' }>): Promise<void> {
  const one = async (h: ClickhouseHost) => {
    if (await tableExists(h.client, step.db, step.table)) return;
    await h.client.command({ query: step.sql });
    if (!(await tableExists(h.client, step.db, step.table))) throw new Error('still missing after its CREATE');
  };
  const [first, ...rest] = hosts.hosts;
  await hosts.on(first!, `create ${step.db}.${step.table}`, () => one(first!));
  await hosts.every(`create ${step.db}.${step.table}`, one, rest);
}

async function drop(hosts: ClusterHosts, step: Extract<ClusterStep, { kind: 'drop' }>): Promise<void> {
  await hosts.every(`drop ${step.db}.${step.table}`, async (h) => {
    if (!(await tableExists(h.client, step.db, step.table))) return;
    await h.client.command({ query: `DROP TABLE IF EXISTS ${step.db}.${step.table}` });
    if (await tableExists(h.client, step.db, step.table)) throw new Error('still there after its DROP');
  });
}

async function alter(hosts: ClusterHosts, step: Extract<ClusterStep, { kind: 'alter' }>): Promise<void> {
  const what = `alter ${step.db}.${step.table}`;
  const done = (columns: Set<string>) =>
    step.add.every((c) => columns.has(c.name)) && step.drop.every((n) => !columns.has(n));
  const seen = await hosts.every(what, async (h) => {
    if (!(await tableExists(h.client, step.db, step.table))) throw new Error('has no such table');
    return { host: h, replica: await replicaState(h.client, step.db, step.table) };
  });
  // The hosts that share a ZooKeeper path change together; a table that is not replicated is its host's alone.
  const groups = new Map<string, typeof seen>();
  for (const s of seen) {
    const key = s.replica ? `zk:${s.replica.zookeeper_path}` : `host:${s.host.name}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  await Promise.all(
    [...groups.values()].map(async (group) => {
      // A replica with a ZooKeeper session does it (a read-only one would refuse).
      const by = group.find((s) => !s.replica?.is_readonly) ?? group[0]!;
      const path = by.replica?.zookeeper_path;
      await hosts.on(by.host, what, async (client) => {
        const present = path ? await sharedColumns(client, path) : await columnsOf(client, step.db, step.table);
        const add = step.add.filter((c) => !present.has(c.name));
        const drop = step.drop.filter((n) => present.has(n));
        if (add.length === 0 && drop.length === 0) return;
        const clauses = [
          ...add.map((c) => `ADD COLUMN ${c.name} ${c.definition}`),
          ...drop.map((n) => `DROP COLUMN ${n}`),
        ];
        await client.command({ query: `ALTER TABLE ${step.db}.${step.table} ${clauses.join(', ')}` }).catch((err) => {
          // Another `meterline migrate` got there first: the check below decides.
          if (!/already exists|no such column|There is no column|Cannot find column/i.test((err as Error).message))
            throw err;
        });
      });
      // Every replica of the path shows it (the one that ran it at once, the twins once they took it from ZooKeeper).
      for (const s of group) {
        const deadline = Date.now() + SETTLE_MS;
        for (;;) {
          const columns = await hosts.on(s.host, what, (c) => columnsOf(c, step.db, step.table));
          if (done(columns)) break;
          if (Date.now() > deadline) {
            const state = await replicaState(s.host.client, step.db, step.table).catch(() => undefined);
            throw new HostError(
              s.host,
              what,
              new NotApplied(
                `has not applied the change ${SETTLE_MS / 1000} s after ${by.host.name} made it (${describe(state)}); start or restart that host and run \`meterline migrate\` again`,
              ),
            );
          }
          await sleep(250);
        }
      }
    }),
  );
}

/** A data step, through the first host's Distributed tables, synchronously to the shards. */
async function data(hosts: ClusterHosts, sql: string): Promise<void> {
  await hosts.on(hosts.hosts[0]!, 'data statement', (c) =>
    c.command({ query: sql, clickhouse_settings: { insert_distributed_sync: 1 } }),
  );
}

/**
 * A replica just started may answer before its ZooKeeper session is up (a replicated CREATE or ALTER then fails
 * with a coordination error or "readonly mode"); the step is idempotent, so it is applied again for this long.
 */
const ZOOKEEPER_WAIT_MS = 30_000;
const ZOOKEEPER_NOT_READY = /Coordination::Exception|ZooKeeper|readonly mode|Connection loss|Session expired/i;

export async function applyStep(hosts: ClusterHosts, step: ClusterStep): Promise<void> {
  const deadline = Date.now() + ZOOKEEPER_WAIT_MS;
  for (;;) {
    try {
      return await applyOnce(hosts, step);
    } catch (err) {
      const notReady =
        ZOOKEEPER_NOT_READY.test((err as Error).message) && !((err as Error).cause instanceof NotApplied);
      if (!notReady || Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

function applyOnce(hosts: ClusterHosts, step: ClusterStep): Promise<void> {
  switch (step.kind) {
    case 'create':
      return create(hosts, step);
    case 'drop':
      return drop(hosts, step);
    case 'alter':
      return alter(hosts, step);
    case 'data':
      return data(hosts, step.sql);
  }
}

/** Every version recorded on any host (the log is replicated; a host that just joined may not have it all yet). */
async function appliedVersions(hosts: ClusterHosts, database: string): Promise<Set<string>> {
  const each = await hosts.every('read the migration log', (h) =>
    selectRows<{ version: string }>(h.client, `SELECT version FROM ${database}.schema_migrations`),
  );
  return new Set(each.flat().map((r) => r.version));
}

/** migrateClickhouse on a cluster (shared/migrate.ts): the versions it applied now. */
export async function migrateClickhouseCluster(
  url: string,
  database: string,
  cluster: string,
  only?: ReadonlySet<string>,
): Promise<string[]> {
  const hosts = await ClusterHosts.open(url, cluster, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
  const ddl = new ClusterDdl(cluster);
  const applied: string[] = [];
  try {
    await hosts.every(`create database ${database}`, (h) =>
      h.client.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` }),
    );
    for (const step of ddl.rewrite(
      `CREATE TABLE IF NOT EXISTS ${database}.schema_migrations (version String, applied_at DateTime DEFAULT now()) ENGINE = ReplacingMergeTree() ORDER BY version`,
    ))
      await applyStep(hosts, step);
    const done = await appliedVersions(hosts, database);
    for (const m of await clickhouseMigrations()) {
      // Rewritten even when skipped: later files' statements need to know which tables are sharded.
      const steps = sqlStatements(m.sql, database).flatMap((s) => ddl.rewrite(s));
      if (done.has(m.version) || (only && !only.has(m.version))) continue;
      for (const step of steps) {
        try {
          await applyStep(hosts, step);
        } catch (err) {
          throw new Error(`clickhouse migration ${m.version} failed: ${(err as Error).message}`, { cause: err });
        }
      }
      await hosts.on(hosts.hosts[0]!, 'record the migration', (c) =>
        c.insert({ table: `${database}.schema_migrations`, values: [{ version: m.version }], format: 'JSONEachRow' }),
      );
      applied.push(m.version);
    }
  } finally {
    await hosts.close();
  }
  return applied;
}
