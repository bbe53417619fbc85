import t from 'tap';
import {
  ClickhouseReplicas,
  READ_ATTEMPTS,
  createClickhouse,
  isInterruptedRead,
} from '../../shared/clients/clickhouse.js';
import { stackUrls } from '../fixtures/env.js';

// On a cluster, a usage read goes to a node that reads each shard from one of its replicas; when that
// replica is killed mid-query, ClickHouse answers with a NetException. The read is asked again (the
// Distributed engine then picks the live replica) instead of reaching the caller as a 500. The errors here
// are ClickHouse 18.16's own: remote() to a port where nothing listens fails as a dead replica does.
const DEAD_REPLICA = "SELECT dummy FROM remote('127.0.0.1:1', system.one)";

t.test('a SELECT interrupted by a dead server is asked again; a bad query is not', async (t) => {
  const url = stackUrls().CLICKHOUSE_URL;
  const replicas = new ClickhouseReplicas([url, url], undefined, { quiet: true });
  t.teardown(() => replicas.close());

  const err = await replicas.select({ query: DEAD_REPLICA, format: 'JSON' }).then(
    () => null,
    (e: Error) => e,
  );
  t.match(
    err?.message,
    /Code: (210|279)\b.*NetException/,
    "ClickHouse's own network error comes back once every attempt failed",
  );
  t.ok(isInterruptedRead(err), 'it is classified as an interrupted read');
  t.equal(replicas.retriedReads, READ_ATTEMPTS - 1, 'and was asked again before giving up');

  const bad = await replicas.select({ query: 'SELECT nosuchcolumn FROM system.one', format: 'JSON' }).then(
    () => null,
    (e: Error) => e,
  );
  t.match(bad?.message, /nosuchcolumn/, 'a query error comes back as it is');
  t.notOk(isInterruptedRead(bad), 'not classified as interrupted');
  t.equal(replicas.retriedReads, READ_ATTEMPTS - 1, 'and is never repeated');
});

t.test('the cluster client answers SELECTs from a fully read body, in every format callers use', async (t) => {
  const url = stackUrls().CLICKHOUSE_URL;
  const ch = createClickhouse(`${url},${url}`);
  t.teardown(() => ch.close());
  const query = 'SELECT number AS n, toString(number * 2) AS s FROM system.numbers LIMIT 3';
  const json = await (await ch.query({ query, format: 'JSON' })).json<{ n: string; s: string }>();
  t.same(
    json.data.map((r) => [Number(r.n), r.s]),
    [
      [0, '0'],
      [1, '2'],
      [2, '4'],
    ],
    'JSON',
  );
  const rows = await (await ch.query({ query, format: 'JSONEachRow' })).json<{ n: string; s: string }>();
  t.same(
    rows.map((r) => [Number(r.n), r.s]),
    [
      [0, '0'],
      [1, '2'],
      [2, '4'],
    ],
    'JSONEachRow',
  );
  t.equal(await (await ch.query({ query, format: 'TabSeparated' })).text(), '0\t0\n1\t2\n2\t4\n', 'text');
});
