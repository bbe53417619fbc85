import t from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startApiProcess } from '../fixtures/api-process.js';
import { jsonPostHead, rawBody, rawRequest, rawStatus, refusesConnections } from '../fixtures/raw-http.js';

/**
 * SIGTERM while a control-plane request is in flight: the api stops taking connections but finishes the
 * request and sends its answer before it closes its pools and exits, so a committed write is never seen
 * as a reset. The request is made slow by its client (the body held back until the process is stopping).
 */
t.test('SIGTERM drains in-flight requests: the slow request completes with its answer', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const acct = await createTestAccount(infra);
  const api = await startApiProcess(t, config, { SHUTDOWN_DRAIN_SECONDS: '120' });
  const port = Number(new URL(api.url).port);

  const body = JSON.stringify({ name: 'created during shutdown', unit: 'requests', aggregation: 'sum' });
  const slow = await rawRequest(
    port,
    jsonPostHead('/v1/meters', body.length, acct.auth.write.authorization),
    body.slice(0, 10),
  );
  const exited = new Promise<number | null>((resolve) => api.child.once('exit', (code) => resolve(code)));
  // The request has reached the process (its body has started) before the signal.
  await waitUntil(async () => (await fetch(`${api.url}/metrics`).then((r) => r.text())).length > 0, 'the api answers');
  api.child.kill('SIGTERM');
  await waitUntil(() => refusesConnections(port), 'the stopping api refuses new connections');
  t.equal(slow.closed(), false, 'the in-flight request is still open');

  slow.socket.write(body.slice(10));
  await waitUntil(
    () => rawStatus(slow.received()) !== 0 && rawBody(slow.received()).endsWith('}'),
    'the in-flight request is answered',
    60_000,
  );
  t.equal(rawStatus(slow.received()), 201, 'the request completed with its answer');
  const meter = JSON.parse(rawBody(slow.received())) as { id: string };
  const { rows } = await infra.pg.query('SELECT name FROM meters WHERE id = $1', [meter.id]);
  t.same(rows, [{ name: 'created during shutdown' }], 'and its write committed');
  t.match(slow.received(), /\r\nConnection: close\r\n/i, 'the answer closes the connection');
  t.equal(await exited, 0, 'the process then exits cleanly');
});
