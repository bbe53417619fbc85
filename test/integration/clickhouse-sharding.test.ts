import t from 'tap';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { SHARDING_KEY_SQL, shardIndex } from '../../shared/clickhouse-cluster.js';
import { stackUrls } from '../fixtures/env.js';

// The consumer routes rows in JS, the Distributed tables in SQL: both must name the same shard for every
// account, or a bulk INSERT through a Distributed table would split an account's record ids over two shards.
t.test('shardIndex in JS equals the Distributed sharding key ClickHouse computes', async (t) => {
  const ch = createClickhouse(stackUrls().CLICKHOUSE_URL);
  t.teardown(() => ch.close());
  const accounts = Array.from({ length: 200 }, (_v, i) => `acct_${i.toString(36)}_${'x'.repeat(i % 7)}`);
  const list = accounts.map((a) => `'${a}'`).join(',');
  const rs = await ch.query({
    query: `SELECT account_id, ${SHARDING_KEY_SQL} % 2 AS s2, ${SHARDING_KEY_SQL} % 3 AS s3 FROM (SELECT arrayJoin([${list}]) AS account_id)`,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<{ account_id: string; s2: number; s3: number }>();
  t.equal(rows.length, accounts.length);
  t.same(
    rows.map((r) => [r.account_id, Number(r.s2), Number(r.s3)]),
    rows.map((r) => [r.account_id, shardIndex(r.account_id, 2), shardIndex(r.account_id, 3)]),
  );
});
