import t from 'tap';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { isolatedConfig, testInfra, type TestLike } from '../fixtures/env.js';
import { ApiService } from '../../services/roles/api/service.js';
import type { RouteModuleFactory } from '../../shared/http/route.js';

/** A route module exercising the shared body handling exactly as real routes use it. */
const echoModule: RouteModuleFactory = () => ({
  name: 'echo',
  area: 'control',
  register(server) {
    server.route({
      method: 'POST',
      path: '/v1/echo',
      auth: 'public',
      handler: (ctx) => ({ status: 200, body: { received: ctx.body ?? null } }),
    });
    server.route({
      method: 'PATCH',
      path: '/v1/echo',
      auth: 'public',
      handler: (ctx) => ({ status: 200, body: { received: ctx.body ?? null } }),
    });
    server.route({
      method: 'POST',
      path: '/v1/form',
      auth: 'public',
      body: 'form-or-json',
      handler: (ctx) => ({ status: 200, body: { received: ctx.body } }),
    });
    server.route({
      method: 'GET',
      path: '/v1/items/:item_id',
      auth: 'public',
      handler: (ctx) => ({ status: 200, body: { id: ctx.params.item_id } }),
    });
    server.route({ method: 'GET', path: '/v1/private', auth: 'read', handler: () => ({ status: 200, body: {} }) });
    server.route({
      method: 'GET',
      path: '/v1/boom',
      auth: 'public',
      handler: () => {
        throw new Error('secret internal detail');
      },
    });
  },
});

async function startEcho(t: TestLike) {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const service = new ApiService(infra, [echoModule]);
  await service.start();
  t.teardown(() => service.stop());
  return `http://127.0.0.1:${service.port}`;
}

function rawPost(
  url: string,
  headers: Record<string, string>,
  chunks: Buffer[],
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body: data ? JSON.parse(data) : null, headers: res.headers }),
      );
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

t.test('shared HTTP conventions', async (t) => {
  const base = await startEcho(t);

  t.test('JSON round trip and X-Request-Id generated', async (t) => {
    const res = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"a":[1,2]}',
    });
    t.equal(res.status, 200);
    t.same(await (res.json() as Promise<any>), { received: { a: [1, 2] } });
    t.match(res.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  });

  t.test('X-Request-Id is echoed, on errors too', async (t) => {
    const res = await fetch(`${base}/nope`, { headers: { 'x-request-id': 'req-abc-123' } });
    t.equal(res.headers.get('x-request-id'), 'req-abc-123');
    t.equal((await (res.json() as Promise<any>)).request_id, 'req-abc-123');
  });

  t.test('unknown route → 404 problem document', async (t) => {
    const res = await fetch(`${base}/v1/does-not-exist`);
    t.equal(res.status, 404);
    t.equal(res.headers.get('content-type'), 'application/problem+json');
    const body = await (res.json() as Promise<any>);
    t.match(body, {
      type: String,
      title: 'Not Found',
      status: 404,
      code: 'not_found',
      detail: /GET \/v1\/does-not-exist/,
      request_id: String,
    });
  });

  t.test('wrong method → 405 with Allow', async (t) => {
    const res = await fetch(`${base}/v1/echo`, { method: 'DELETE' });
    t.equal(res.status, 405);
    t.equal(res.headers.get('allow'), 'POST, PATCH');
    t.equal((await (res.json() as Promise<any>)).code, 'method_not_allowed');
  });

  t.test('path parameters are decoded', async (t) => {
    const res = await fetch(`${base}/v1/items/a%20b`);
    t.same(await (res.json() as Promise<any>), { id: 'a b' });
  });

  t.test('malformed JSON → 400 malformed_json', async (t) => {
    const res = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    t.equal(res.status, 400);
    t.match(await (res.json() as Promise<any>), { code: 'malformed_json', status: 400 });
  });

  t.test('non-JSON body → 415; form accepted only where the route allows it', async (t) => {
    const res = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    t.equal(res.status, 415);
    t.equal((await (res.json() as Promise<any>)).code, 'unsupported_media_type');
    const form = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    t.equal(form.status, 415);
    const ok = await fetch(`${base}/v1/form`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1&b=x+y',
    });
    t.same(await (ok.json() as Promise<any>), { received: { a: '1', b: 'x y' } });
  });

  t.test('an empty body is allowed (no content type needed)', async (t) => {
    const res = await fetch(`${base}/v1/echo`, { method: 'PATCH' });
    t.equal(res.status, 200);
    t.same(await (res.json() as Promise<any>), { received: null });
  });

  t.test('body over 1 MiB → 413 from Content-Length', async (t) => {
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    const res = await rawPost(
      `${base}/v1/echo`,
      { 'content-type': 'application/json', 'content-length': String(big.length) },
      [big],
    );
    t.equal(res.status, 413);
    t.equal(res.body.code, 'payload_too_large');
  });

  t.test('body over 1 MiB → 413 while streaming (chunked, no Content-Length)', async (t) => {
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const res = await rawPost(
      `${base}/v1/echo`,
      { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      [chunk, chunk, chunk, chunk, chunk],
    );
    t.equal(res.status, 413);
    t.equal(res.body.code, 'payload_too_large');
  });

  t.test('exactly 1 MiB of JSON is accepted', async (t) => {
    const payload = JSON.stringify({ s: 'x'.repeat(1024 * 1024 - 8) });
    t.equal(Buffer.byteLength(payload), 1024 * 1024);
    const res = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    t.equal(res.status, 200);
  });

  t.test('protected route without a token → 401 with WWW-Authenticate', async (t) => {
    const res = await fetch(`${base}/v1/private`);
    t.equal(res.status, 401);
    t.match(res.headers.get('www-authenticate'), /^Bearer /);
    t.equal((await (res.json() as Promise<any>)).code, 'unauthorized');
  });

  t.test('an unexpected error → 500 without internals', async (t) => {
    const res = await fetch(`${base}/v1/boom`);
    t.equal(res.status, 500);
    const body = await (res.json() as Promise<any>);
    t.equal(body.code, 'internal_error');
    t.notMatch(JSON.stringify(body), /secret internal detail/);
  });

  t.test('a client that aborts mid-body does not hurt the server', async (t) => {
    await new Promise<void>((resolve) => {
      const u = new URL(base);
      const sock = connect(Number(u.port), u.hostname, () => {
        sock.write(
          'POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"partial":',
        );
        setImmediate(() => {
          sock.destroy();
          resolve();
        });
      });
    });
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${base}/healthz`);
      t.equal(res.status, 200);
    }
  });

  t.test('/healthz, /readyz and /metrics', async (t) => {
    t.same(await (await fetch(`${base}/healthz`)).json(), { status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    t.equal(ready.status, 200);
    t.match(await (ready.json() as Promise<any>), {
      status: 'ready',
      checks: { postgres: { ok: true }, nats: { ok: true }, clickhouse: { ok: true } },
    });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    t.match(metrics, /meterline_http_requests_total\{[^}]*route="\/v1\/echo"[^}]*status="413"/);
    t.match(metrics, /process_cpu_user_seconds_total/);
  });
});
