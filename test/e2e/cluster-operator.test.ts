import t from 'tap';
import { startLocalCluster } from '../fixtures/cluster.js';
import { operatorModelTest } from '../fixtures/operator-model.js';
import { customerShard } from '../../shared/customers/shards.js';
import { shardIndex } from '../../shared/clickhouse-cluster.js';

/**
 * Operator mode on the local cluster (NATS cluster, ClickHouse 2 shards × 2 replicas, two api processes behind
 * HAProxy, every role a process of its own): the same model test as on one server. An admin emitter's request
 * holds records of customers on both ClickHouse shards, so every attributed message is split by shard in the
 * consumer and acked once both pieces are in; reads of all customers go through the Distributed tables.
 */
// The file's own timeout (the root's setTimeout tells the runner; its --timeout=300 is too short for a cluster,
// 1,000 customers and 120,000 sends on a shared 2-core machine).
t.setTimeout(40 * 60_000);
t.test('operator mode on the cluster: the same model, exactly counted', async (t) => {
  const c = await startLocalCluster(t);
  await operatorModelTest(
    t,
    { url: c.base, infra: c.infra, config: c.config },
    {
      customers: Number(process.env.OPERATOR_TEST_CUSTOMERS ?? 1000),
      records: Number(process.env.OPERATOR_TEST_RECORDS ?? 100_000),
    },
  );
  // The customers lived on both shards (so the split ran): checked on the registry's own accounts.
  const { rows } = await c.infra.pg.query<{ id: string }>('SELECT id FROM accounts WHERE external_id IS NOT NULL');
  const shards = new Set(rows.map((r) => shardIndex(r.id, 2)));
  t.same([...shards].sort(), [0, 1], 'customers on both ClickHouse shards');
  t.ok(new Set(rows.map((r) => customerShard(r.id))).size > 1, 'and on many registry shards');
});
