import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { ClusterDdl, SHARDING_KEY_SQL, shardIndex } from '../../shared/clickhouse-cluster.js';
import { parseConfig } from '../../shared/config.js';
import { repoPath } from '../../shared/paths.js';

const base = {
  DATABASE_URL: 'postgres://u@127.0.0.1:55432/db',
  NATS_URL: 'nats://127.0.0.1:54222',
  CLICKHOUSE_URL: 'http://127.0.0.1:58123',
  SECRET_KEY: 'ab'.repeat(32),
};

t.test('cluster settings: URL lists, replicas, cluster name; single-server defaults', async (t) => {
  const single = parseConfig(base);
  t.equal(single.NATS_STREAM_REPLICAS, 1);
  t.equal(single.CLICKHOUSE_CLUSTER, '');
  const c = parseConfig({
    ...base,
    NATS_URL: 'nats://a:1, nats://b:2,nats://c:3',
    CLICKHOUSE_URL: 'http://h:1/,http://h:2',
    NATS_STREAM_REPLICAS: '3',
    CLICKHOUSE_CLUSTER: 'meterline',
  });
  t.equal(c.NATS_URL, 'nats://a:1,nats://b:2,nats://c:3');
  t.equal(c.CLICKHOUSE_URL, 'http://h:1,http://h:2');
  t.equal(c.NATS_STREAM_REPLICAS, 3);
  t.throws(
    () => parseConfig({ ...base, NATS_URL: 'nats://a:1,,nats://b:2' }),
    /NATS_URL: must be one URL or a comma-separated list/,
  );
  t.throws(() => parseConfig({ ...base, CLICKHOUSE_URL: 'http://a:1,ftp://b' }), /CLICKHOUSE_URL: must use http/);
  t.throws(
    () => parseConfig({ ...base, NATS_STREAM_REPLICAS: '0' }),
    /NATS_STREAM_REPLICAS: must be an integer from 1 to 5/,
  );
  t.throws(() => parseConfig({ ...base, CLICKHOUSE_CLUSTER: 'Bad-Name' }), /CLICKHOUSE_CLUSTER: must match/);
});

const dims = [
  { name: 'dim_keys', definition: 'Array(String)' },
  { name: 'dim_values', definition: 'Array(String)' },
];

t.test('the migration files rewritten for a cluster: sharded by account, replicated, never ON CLUSTER', async (t) => {
  const ddl = new ClusterDdl('mc');
  const dir = repoPath('infra/migrations/clickhouse');
  const steps = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .flatMap((f) =>
      readFileSync(`${dir}/${f}`, 'utf8')
        .replace(/\{database\}/g, 'db')
        .split(/;\s*(?:\n|$)/)
        .map((s) => s.replace(/^[ \t]*--.*$/gm, '').trim())
        .filter(Boolean),
    )
    .flatMap((s) => ddl.rewrite(s));
  const out = steps.map((s) => ('sql' in s ? s.sql : JSON.stringify(s)));
  t.notOk(
    out.some((s) => /ON CLUSTER/i.test(s)),
    'no statement goes through the DDL queue',
  );
  const find = (re: RegExp) => out.find((s) => re.test(s)) ?? '';
  t.match(
    find(/TABLE IF NOT EXISTS db\.usage_records_local /),
    /ENGINE = ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{shard\}\/db\/usage_records_local', '\{replica\}'\)/,
  );
  t.match(
    find(/TABLE IF NOT EXISTS db\.usage_records AS/),
    `AS db.usage_records_local ENGINE = Distributed(mc, db, usage_records_local, ${SHARDING_KEY_SQL})`,
  );
  t.match(
    find(/db\.usage_hourly_local \(/),
    /ReplicatedReplacingMergeTree\('[^']+usage_hourly_local', '\{replica\}', version\)/,
    'engine arguments kept after the replication ones',
  );
  t.match(
    find(/MATERIALIZED VIEW/),
    /usage_hours_touched_mv TO db\.usage_hours_touched_local AS[\s\S]*FROM db\.usage_records_local/,
  );
  t.match(
    find(/usage_rollup_sweeps/),
    /'\/clickhouse\/tables\/all\/db\/usage_rollup_sweeps'/,
    'a table without accounts is replicated to every node',
  );
  t.notOk(out.some((s) => /usage_rollup_sweeps_local/.test(s)));
  t.match(
    find(/db\.usage_cancellations_local \(/),
    /ReplicatedReplacingMergeTree\('\/clickhouse\/tables\/\{shard\}\/db\/usage_cancellations_local'/,
    "cancellations live on the account's shard",
  );
  t.match(
    find(/TABLE IF NOT EXISTS db\.usage_cancellations AS/),
    'ENGINE = Distributed(mc, db, usage_cancellations_local',
  );
  t.same(
    steps.filter((s) => s.kind === 'alter' && s.table.startsWith('usage_hourly')),
    [
      { kind: 'alter', db: 'db', table: 'usage_hourly_local', add: dims, drop: [] },
      { kind: 'alter', db: 'db', table: 'usage_hourly', add: dims, drop: [] },
    ],
    "migration 320's columns: the shards' local table first, then the Distributed table over it",
  );
  t.same(
    steps.find((s) => s.kind === 'alter' && s.table === 'usage_unique_meters_local'),
    {
      kind: 'alter',
      db: 'db',
      table: 'usage_unique_meters_local',
      add: [{ name: 'ready', definition: 'UInt8 DEFAULT 1' }],
      drop: [],
    },
    'a default is part of the column definition',
  );
  t.same(
    ddl.rewrite('ALTER TABLE db.usage_records DROP COLUMN dims'),
    [
      { kind: 'alter', db: 'db', table: 'usage_records', add: [], drop: ['dims'] },
      { kind: 'alter', db: 'db', table: 'usage_records_local', add: [], drop: ['dims'] },
    ],
    'a dropped column leaves the Distributed table first',
  );
  t.same(
    ddl.rewrite('ALTER TABLE db.usage_rollup_sweeps ADD COLUMN note String'),
    [
      {
        kind: 'alter',
        db: 'db',
        table: 'usage_rollup_sweeps',
        add: [{ name: 'note', definition: 'String' }],
        drop: [],
      },
    ],
    'a table replicated everywhere has no Distributed table to follow',
  );
  t.same(ddl.rewrite('DROP TABLE IF EXISTS db.usage_records'), [
    { kind: 'drop', db: 'db', table: 'usage_records' },
    { kind: 'drop', db: 'db', table: 'usage_records_local' },
  ]);
  t.same(ddl.rewrite('INSERT INTO db.usage_claims SELECT 1'), [
    { kind: 'data', sql: 'INSERT INTO db.usage_claims SELECT 1' },
  ]);
  t.throws(() => ddl.rewrite('DROP TABLE db.x'), /no cluster form/);
  t.throws(
    () => ddl.rewrite('ALTER TABLE db.usage_records MODIFY COLUMN value String'),
    /no cluster form for this ALTER clause/,
  );
});

t.test('shard routing spreads accounts over the shards and is stable', async (t) => {
  const counts = [0, 0];
  for (let i = 0; i < 1000; i++) counts[shardIndex(`acct_${i}`, 2)]!++;
  t.ok(counts[0]! > 400 && counts[1]! > 400, `both shards get accounts (${counts.join('/')})`);
  t.equal(shardIndex('acct_abc', 2), shardIndex('acct_abc', 2));
});
