import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { clickhouseUrls, createClickhouse } from '../../shared/clients/clickhouse.js';
import { migrateClickhouse, clickhouseMigrations } from '../../shared/migrate.js';
import { startLocalCluster, type LocalCluster } from '../fixtures/cluster.js';
import { waitUntil } from '../fixtures/env.js';

/**
 * The cluster migration runner (shared/migrate-cluster.ts, issue 50) on the local cluster (ClickHouse 2 shards ×
 * 2 replicas): nothing goes ON CLUSTER; a statement whose effect is already there on some hosts is skipped there
 * and applied elsewhere; runs killed at any point finish on the next one; two runs at once both finish; a host
 * that is down stops the run at once, named. Each case migrates a database of its own and compares every host's
 * schema with the database `meterline up` migrated on the fresh cluster.
 */

/** Every host's columns of `db`, as `table.column type` lines, per host URL. */
async function schemaByHost(c: LocalCluster, db: string): Promise<string[][]> {
  return Promise.all(
    clickhouseUrls(c.config.CLICKHOUSE_URL).map(async (url) => {
      const ch = createClickhouse(url);
      try {
        const rs = await ch.query({
          // 18.16 has no query parameters; `db` is one of this file's names.
          query: `SELECT table, name, type FROM system.columns WHERE database = '${db}' ORDER BY table, name`,
          format: 'JSONEachRow',
        });
        return (await rs.json<{ table: string; name: string; type: string }>()).map(
          (r) => `${r.table}.${r.name} ${r.type}`,
        );
      } finally {
        await ch.close();
      }
    }),
  );
}

/** `meterline migrate`'s ClickHouse part in a process of its own, SIGKILLed after `ms` (if still running). */
function migrateKilledAfter(c: LocalCluster, db: string, ms: number): Promise<void> {
  const migrate = fileURLToPath(new URL('../../shared/migrate.js', import.meta.url));
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { migrateClickhouse } from ${JSON.stringify(migrate)}; await migrateClickhouse(process.env.URL, process.env.DB, process.env.CLUSTER);`,
    ],
    {
      env: { ...process.env, URL: c.config.CLICKHOUSE_URL, DB: db, CLUSTER: c.config.CLICKHOUSE_CLUSTER },
      stdio: 'ignore',
    },
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  return new Promise((resolve) =>
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    }),
  );
}

t.test('cluster migrations: host by host, idempotent, resumable, a missing host named', async (t) => {
  const c = await startLocalCluster(t);
  const { CLICKHOUSE_URL: url, CLICKHOUSE_CLUSTER: cluster, CLICKHOUSE_DATABASE: main } = c.config;
  const versions = (await clickhouseMigrations()).map((m) => m.version);
  const expected = (await schemaByHost(c, main))[0]!;
  t.ok(expected.includes('usage_records_local.dim_keys Array(String)'), 'the fresh cluster was migrated');
  const sameEverywhere = async (db: string, what: string) => {
    const hosts = await schemaByHost(c, db);
    for (const [i, columns] of hosts.entries()) t.same(columns, expected, `${what}: host ${i + 1} has every column`);
  };

  // A run stopped after ALTERing shard 1 only (by hand here): the next run alters shard 2 and the Distributed table.
  const partial = 'probe_partial';
  const upTo320 = new Set(versions.filter((v) => v < '320'));
  t.same(await migrateClickhouse(url, partial, cluster, upTo320), [...upTo320]);
  const s1r1 = createClickhouse(clickhouseUrls(url)[0]!);
  await s1r1
    .command({
      query: `ALTER TABLE ${partial}.usage_records_local ADD COLUMN dim_keys Array(String), ADD COLUMN dim_values Array(String)`,
    })
    .finally(() => s1r1.close());
  t.same(
    await migrateClickhouse(url, partial, cluster),
    versions.filter((v) => !upTo320.has(v)),
  );
  await sameEverywhere(partial, 'after a half-applied ALTER');
  t.same(await migrateClickhouse(url, partial, cluster), [], 'a run after a complete one has nothing to do');

  // Runs killed at growing points: each leaves what it did, the next goes on from there.
  const killed = 'probe_killed';
  for (const ms of [400, 900, 1_500, 2_200, 3_000, 4_000]) await migrateKilledAfter(c, killed, ms);
  const rest = await migrateClickhouse(url, killed, cluster);
  t.comment(`after the killed runs, the last one applied ${rest.length} of ${versions.length} versions`);
  await sameEverywhere(killed, 'after killed runs');

  // Two runs at once (two operators, or two `meterline up`): both finish, the schema is whole once.
  const twice = 'probe_twice';
  const [a, b] = await Promise.all([migrateClickhouse(url, twice, cluster), migrateClickhouse(url, twice, cluster)]);
  t.ok(a.length + b.length >= versions.length, 'every version applied by one run or the other');
  await sameEverywhere(twice, 'after two runs at once');

  // A host down: the run stops at once and names it (no wait on a DDL queue), and finishes once it is back.
  const down = await c.process('clickhouse-s2r2');
  process.kill(down.pid, 'SIGKILL');
  const downUrl = clickhouseUrls(url).find((u) => u.includes(`:${down.ports[0]}`)) ?? '';
  t.ok(downUrl, 'the killed replica is in CLICKHOUSE_URL');
  const started = Date.now();
  await t.rejects(
    migrateClickhouse(url, 'probe_down', cluster),
    new RegExp(`ClickHouse host http://default@127\\.0\\.0\\.1:${down.ports[0]}: did not answer`),
    'the error names the host (its URL without the password)',
  );
  t.ok(Date.now() - started < 30_000, `reported in ${Date.now() - started} ms`);
  await c.serversUp();
  await waitUntil(
    () =>
      migrateClickhouse(url, 'probe_down', cluster).then(
        () => true,
        () => false,
      ),
    'the migration to pass once the host is back',
    60_000,
    1_000,
  );
  await sameEverywhere('probe_down', 'once the host is back');
});
