import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNats } from '../../infra/stack/servers.js';
import { isolatedConfig, freePort, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';

// Fault injection on a private NATS server, so the shared stack stays untouched for other test files.
t.test('/readyz follows NATS: 200 → stop → 503 naming nats → start → 200', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'meterline-nats-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const port = await freePort();
  let nats = await startNats({ dir, port });
  t.teardown(() => nats.stop());

  const config = await isolatedConfig(t, { NATS_URL: nats.url });
  const api = await startApi(t, config);
  const readyz = async () => {
    const res = await fetch(`${api.url}/readyz`);
    return { status: res.status, body: await (res.json() as Promise<any>), retryAfter: res.headers.get('retry-after') };
  };

  t.equal((await readyz()).status, 200, 'ready while every server answers');

  await nats.stop();
  let last = await readyz();
  await waitUntil(async () => (last = await readyz()).status === 503, 'readyz to report 503');
  t.same(last.body.down, ['nats'], 'names nats, and only nats, as down');
  t.equal(last.body.checks.postgres.ok, true);
  t.equal(last.body.checks.clickhouse.ok, true);
  t.equal(last.retryAfter, '1');

  nats = await startNats({ dir, port });
  await waitUntil(async () => (await readyz()).status === 200, 'readyz to recover after NATS restarts', 30_000);
  t.pass('ready again after NATS came back');
});

// ClickHouse holds usage for queries only: its outage must not pull ingest (or the control plane, whose usage
// query answers 503 itself) out of a load balancer.
t.test('ClickHouse down: an ingest-only and a full api stay ready, naming clickhouse in their checks', async (t) => {
  const config = await isolatedConfig(t);
  const deadClickhouse = `http://127.0.0.1:${await freePort()}`;
  for (const API_ROUTES of ['ingress', 'all'] as const) {
    const api = await startApi(t, { ...config, API_ROUTES, CLICKHOUSE_URL: deadClickhouse });
    const res = await fetch(`${api.url}/readyz`);
    const body = (await res.json()) as any;
    t.equal(res.status, 200, `${API_ROUTES}: ready`);
    t.equal(body.checks.clickhouse.ok, false, `${API_ROUTES}: reports clickhouse down`);
    t.equal(body.checks.nats.ok, true);
  }
});
