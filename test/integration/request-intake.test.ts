import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { jsonPostHead, rawBody as bodyOf, rawRequest, rawStatus as status } from '../fixtures/raw-http.js';

/**
 * What a request costs before it is accepted: one refused by auth or size is answered and its connection
 * closed without the rest of its body being read; the bodies buffered across all requests are capped
 * (MAX_BUFFERED_REQUEST_BYTES), past which a request gets 503 `overloaded` and is closed.
 */
t.test('refused requests are closed unread; buffered bodies are capped', async (t) => {
  const config = await isolatedConfig(t, { MAX_BUFFERED_REQUEST_BYTES: String(1024 * 1024) });
  const api = await startApi(t, config);
  const port = api.service.port;
  const acct = await createTestAccount(api.infra);
  const meterBody = (size: number) => {
    const json = JSON.stringify({ name: `big ${size} ${Math.random()}`, unit: 'u', aggregation: 'sum' });
    return json + ' '.repeat(size - json.length);
  };
  const head = (length: number, auth?: string) => jsonPostHead('/v1/meters', length, auth);

  t.test('no token: 401 at once and the connection closed, the announced body never read', async (t) => {
    const x = await rawRequest(port, head(1024 * 1024 - 1), '{"name": "x"'.padEnd(4096, ' '));
    await waitUntil(() => x.closed(), 'the server closes the connection after its 401');
    t.equal(status(x.received()), 401);
    t.equal(JSON.parse(bodyOf(x.received())).code, 'unauthorized');
    t.equal(api.service.server.bodyBudget.bytes, 0, 'nothing of it stays reserved');
  });

  t.test('a body announced over 1 MiB: 413 and closed', async (t) => {
    const x = await rawRequest(port, head(2 * 1024 * 1024, acct.auth.write.authorization), ' '.repeat(1024));
    await waitUntil(() => x.closed(), 'closed after the 413');
    t.equal(status(x.received()), 413);
  });

  t.test(
    'past the cap on buffered bytes: 503 overloaded and closed; the request holding the bytes completes',
    async (t) => {
      const size = 700 * 1024;
      const body = meterBody(size);
      const holder = await rawRequest(port, head(size, acct.auth.write.authorization), body.slice(0, 1024));
      await waitUntil(
        () => api.service.server.bodyBudget.bytes >= size,
        'the slow request reserved its announced body',
      );

      const refused = await rawRequest(port, head(size, acct.auth.write.authorization), body.slice(0, 1024));
      await waitUntil(() => refused.closed(), 'the overloaded request is answered and closed');
      t.equal(status(refused.received()), 503);
      t.match(refused.received(), /\r\nRetry-After: \d+\r\n/i);
      t.equal(JSON.parse(bodyOf(refused.received())).code, 'overloaded');
      t.equal(holder.closed(), false, 'the first request is still being read');

      holder.socket.write(body.slice(1024));
      await waitUntil(
        () => status(holder.received()) !== 0 && bodyOf(holder.received()).endsWith('}'),
        'the first request is answered',
      );
      t.equal(status(holder.received()), 201, 'the request within the cap was served');
      holder.socket.destroy();
      await waitUntil(() => api.service.server.bodyBudget.bytes === 0, 'its bytes are given back once answered');

      const after = await fetch(`${api.url}/v1/meters`, {
        method: 'POST',
        headers: { ...acct.auth.write, 'content-type': 'application/json' },
        body: meterBody(size),
      });
      t.equal(after.status, 201, 'room again for a request of the same size');
    },
  );
});
