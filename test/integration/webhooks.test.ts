import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { newId } from '../../shared/ids.js';
import { unsealWebhookSecret, webhookSecretKey } from '../../services/domain/webhooks/secret.js';

function client(base: string) {
  return async (method: string, path: string, opts: { auth?: { authorization: string }; body?: unknown } = {}) => {
    const headers: Record<string, string> = { ...(opts.auth ?? {}) };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET = 'whsec_caller_chosen_0123456789';

t.test('webhooks (https only: WEBHOOKS_ALLOW_PRIVATE_URLS=false)', async (t) => {
  const config = await isolatedConfig(t, { WEBHOOKS_ALLOW_PRIVATE_URLS: 'false' });
  const api = await startApi(t, config);
  const call = client(api.url);
  const a = await createTestAccount(api.infra);
  const b = await createTestAccount(api.infra);
  const sealedOf = async (id: string) =>
    (await api.infra.pg.query('SELECT secret_sealed FROM webhooks WHERE id = $1', [id])).rows[0]
      ?.secret_sealed as string;
  const key = webhookSecretKey(config.SECRET_KEY);
  let hookId = '';

  t.test('create with a secret: 201, this shape, the secret never returned', async (t) => {
    const res = await call('POST', '/v1/webhooks', {
      auth: a.auth.write,
      body: { url: 'https://example.com/hooks/meterline', events: ['invoice.created', 'invoice.paid'], secret: SECRET },
    });
    t.equal(res.status, 201);
    t.match(res.body.id, /^wh_[0-9A-Za-z]{22}$/);
    t.match(res.body.created_at, ISO_MS);
    t.same(res.body, {
      id: res.body.id,
      url: 'https://example.com/hooks/meterline',
      events: ['invoice.created', 'invoice.paid'],
      status: 'enabled',
      scope: 'account',
      created_at: res.body.created_at,
      updated_at: res.body.created_at,
    });
    t.equal(res.headers.get('location'), `/v1/webhooks/${res.body.id}`);
    hookId = res.body.id;
    const got = await call('GET', `/v1/webhooks/${hookId}`, { auth: a.auth.read });
    t.equal(got.status, 200);
    t.same(got.body, res.body);
    const sealed = await sealedOf(hookId);
    t.notOk(sealed.includes(SECRET), 'stored sealed');
    t.equal(unsealWebhookSecret(key, sealed), SECRET, 'delivery can recover it to sign');
  });

  t.test('create without a secret: the generated one is returned once', async (t) => {
    const res = await call('POST', '/v1/webhooks', {
      auth: a.auth.write,
      body: { url: 'https://example.com/other', events: ['payment.failed'] },
    });
    t.equal(res.status, 201);
    t.match(
      res.body.secret,
      /^whsec_[A-Za-z0-9+/]{43}=$/,
      'Standard Webhooks form: whsec_ + padded base64 of 32 bytes',
    );
    t.equal(Buffer.from(res.body.secret.slice(6), 'base64').length, 32);
    t.same(Object.keys(res.body).sort(), [
      'created_at',
      'events',
      'id',
      'scope',
      'secret',
      'status',
      'updated_at',
      'url',
    ]);
    t.equal(unsealWebhookSecret(key, await sealedOf(res.body.id)), res.body.secret);
    const got = await call('GET', `/v1/webhooks/${res.body.id}`, { auth: a.auth.read });
    t.notOk('secret' in got.body, 'never again');
    const list = await call('GET', '/v1/webhooks', { auth: a.auth.read });
    t.notOk(list.body.data.some((w: any) => 'secret' in w));
    const again = await call('POST', '/v1/webhooks', {
      auth: a.auth.write,
      body: { url: 'https://example.com/other', events: ['payment.failed'] },
    });
    t.not(again.body.secret, res.body.secret, 'each generated secret is new');
  });

  t.test('every event type is accepted', async (t) => {
    const events = [
      'invoice.created',
      'invoice.paid',
      'payment.failed',
      'subscription.updated',
      'meter.usage.recorded',
    ];
    const res = await call('POST', '/v1/webhooks', {
      auth: a.auth.write,
      body: { url: 'https://93.184.216.34:8443/x?y=1', events, secret: SECRET },
    });
    t.equal(res.status, 201);
    t.same(res.body.events, events);
  });

  t.test('invalid registrations are 422 naming the field; nothing stored', async (t) => {
    const count = async () =>
      (await api.infra.pg.query('SELECT count(*)::int AS n FROM webhooks WHERE account_id = $1', [a.accountId])).rows[0]
        .n;
    const before = await count();
    const ok = { url: 'https://example.com/h', events: ['invoice.paid'] };
    const cases: [string, unknown, string[]][] = [
      ['http', { ...ok, url: 'http://example.com/h' }, ['url']],
      ['not a URL', { ...ok, url: 'example.com/h' }, ['url']],
      ['loopback literal', { ...ok, url: 'https://127.0.0.1/h' }, ['url']],
      ['private literal', { ...ok, url: 'https://192.168.0.10/h' }, ['url']],
      ['link-local (metadata)', { ...ok, url: 'https://169.254.169.254/latest' }, ['url']],
      ['IPv6 loopback', { ...ok, url: 'https://[::1]:8443/h' }, ['url']],
      ['IPv4-mapped loopback', { ...ok, url: 'https://[::ffff:127.0.0.1]/h' }, ['url']],
      ['decimal loopback', { ...ok, url: 'https://2130706433/h' }, ['url']],
      ['localhost', { ...ok, url: 'https://localhost/h' }, ['url']],
      ['credentials in URL', { ...ok, url: 'https://u:p@example.com/h' }, ['url']],
      ['URL too long', { ...ok, url: 'https://example.com/' + 'a'.repeat(2040) }, ['url']],
      ['URL not a string', { ...ok, url: 42 }, ['url']],
      ['missing url', { events: ok.events }, ['url']],
      ['no events', { ...ok, events: [] }, ['events']],
      ['events missing', { url: ok.url }, ['events']],
      ['events not an array', { ...ok, events: 'invoice.paid' }, ['events']],
      ['unknown event at index 1', { ...ok, events: ['invoice.paid', 'invoice.deleted'] }, ['events[1]']],
      [
        'duplicate event at index 2',
        { ...ok, events: ['invoice.paid', 'payment.failed', 'invoice.paid'] },
        ['events[2]'],
      ],
      ['secret of 15 characters', { ...ok, secret: 'x'.repeat(15) }, ['secret']],
      ['secret of 257 characters', { ...ok, secret: 'x'.repeat(257) }, ['secret']],
      ['secret not a string', { ...ok, secret: 1234567890123456789 }, ['secret']],
      ['status at creation', { ...ok, status: 'disabled' }, ['status']],
      ['unknown field', { ...ok, description: 'x' }, ['description']],
      [
        'several at once',
        { url: 'http://x.example', events: ['nope'], secret: 'short' },
        ['events[0]', 'secret', 'url'],
      ],
    ];
    for (const [what, body, fields] of cases) {
      const res = await call('POST', '/v1/webhooks', { auth: a.auth.write, body });
      t.equal(res.status, 422, what);
      t.equal(res.body.code, 'validation_failed', what);
      t.same(res.body.errors.map((e: any) => e.field).sort(), fields, what);
    }
    t.equal(await count(), before);
    const boundary = await call('POST', '/v1/webhooks', {
      auth: a.auth.write,
      body: { ...ok, secret: 's'.repeat(16) },
    });
    t.equal(boundary.status, 201, '16-character secret');
    const long = await call('POST', '/v1/webhooks', { auth: a.auth.write, body: { ...ok, secret: 's'.repeat(256) } });
    t.equal(long.status, 201, '256-character secret');
  });

  t.test('PATCH changes url, events, status and rotates the secret', async (t) => {
    const before = (await call('GET', `/v1/webhooks/${hookId}`, { auth: a.auth.read })).body;
    const res = await call('PATCH', `/v1/webhooks/${hookId}`, {
      auth: a.auth.write,
      body: { url: 'https://example.org/new', events: ['subscription.updated'] },
    });
    t.equal(res.status, 200);
    t.same(res.body, {
      ...before,
      url: 'https://example.org/new',
      events: ['subscription.updated'],
      updated_at: res.body.updated_at,
    });
    t.ok(res.body.updated_at > before.updated_at, 'updated_at moves');
    const disabled = await call('PATCH', `/v1/webhooks/${hookId}`, {
      auth: a.auth.write,
      body: { status: 'disabled' },
    });
    t.equal(disabled.body.status, 'disabled');
    t.equal(disabled.body.url, 'https://example.org/new', 'other fields kept');
    const enabled = await call('PATCH', `/v1/webhooks/${hookId}`, { auth: a.auth.write, body: { status: 'enabled' } });
    t.equal(enabled.body.status, 'enabled');
    const rotated = await call('PATCH', `/v1/webhooks/${hookId}`, {
      auth: a.auth.write,
      body: { secret: 'a-brand-new-secret-value' },
    });
    t.equal(rotated.status, 200);
    t.notOk('secret' in rotated.body);
    t.equal(unsealWebhookSecret(key, await sealedOf(hookId)), 'a-brand-new-secret-value');
  });

  t.test('invalid PATCHes are 422 naming the field and change nothing', async (t) => {
    const before = (await call('GET', `/v1/webhooks/${hookId}`, { auth: a.auth.read })).body;
    const cases: [string, unknown, string[]][] = [
      ['empty', {}, ['']],
      ['bad status', { status: 'paused' }, ['status']],
      ['private url', { url: 'https://10.0.0.1/x' }, ['url']],
      ['duplicate event', { events: ['invoice.paid', 'invoice.paid'] }, ['events[1]']],
      ['no events', { events: [] }, ['events']],
      ['short secret', { secret: 'short' }, ['secret']],
      ['read-only field', { id: 'wh_x' }, ['id']],
      ['created_at', { created_at: '2020-01-01T00:00:00Z' }, ['created_at']],
    ];
    for (const [what, body, fields] of cases) {
      const res = await call('PATCH', `/v1/webhooks/${hookId}`, { auth: a.auth.write, body });
      t.equal(res.status, 422, what);
      t.same(res.body.errors.map((e: any) => e.field).sort(), fields, what);
    }
    t.same((await call('GET', `/v1/webhooks/${hookId}`, { auth: a.auth.read })).body, before);
    t.equal(
      (await call('PATCH', '/v1/webhooks/wh_nope', { auth: a.auth.write, body: { status: 'disabled' } })).status,
      404,
    );
  });

  t.test('list: newest first, paginated, bounds checked', async (t) => {
    const c = await createTestAccount(api.infra);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call('POST', '/v1/webhooks', {
        auth: c.auth.write,
        body: { url: `https://example.com/${i}`, events: ['invoice.paid'], secret: SECRET },
      });
      ids.push(res.body.id);
    }
    const all = await call('GET', '/v1/webhooks', { auth: c.auth.read });
    t.same(all.body.pagination, { page: 1, per_page: 20, total: 5 });
    t.same(
      all.body.data.map((w: any) => w.id),
      [...ids].reverse(),
    );
    const p2 = await call('GET', '/v1/webhooks?page=2&per_page=2', { auth: c.auth.read });
    t.same(
      p2.body.data.map((w: any) => w.id),
      [ids[2], ids[1]],
    );
    t.same(p2.body.pagination, { page: 2, per_page: 2, total: 5 });
    for (const [q, field] of [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['sort=asc', 'sort'],
    ]) {
      const bad = await call('GET', `/v1/webhooks?${q}`, { auth: c.auth.read });
      t.equal(bad.status, 422, q);
      t.same(
        bad.body.errors.map((e: any) => e.field),
        [field],
        q,
      );
    }
  });

  t.test('deliveries: the list exists, empty until something is delivered, then newest first', async (t) => {
    const empty = await call('GET', `/v1/webhooks/${hookId}/deliveries`, { auth: a.auth.read });
    t.equal(empty.status, 200);
    t.same(empty.body, { data: [], pagination: { page: 1, per_page: 20, total: 0 } });
    // What the dispatcher will write (a later issue): three attempts of one event.
    const rows = [
      {
        attempt: 1,
        status: 'failed',
        response_status: 500,
        error: 'HTTP 500',
        duration_ms: 31,
        at: '2026-01-01T10:00:00.000Z',
        sent: '2026-01-01T10:00:00.120Z',
        next: '2026-01-01T10:01:00.000Z',
      },
      {
        attempt: 2,
        status: 'failed',
        response_status: null,
        error: 'timeout after 10000 ms',
        duration_ms: 10_001,
        at: '2026-01-01T10:01:00.000Z',
        sent: '2026-01-01T10:01:00.050Z',
        next: '2026-01-01T10:06:00.000Z',
      },
      {
        attempt: 3,
        status: 'succeeded',
        response_status: 204,
        error: null,
        duration_ms: 12,
        at: '2026-01-01T10:06:00.000Z',
        sent: '2026-01-01T10:06:00.010Z',
        next: null,
      },
    ];
    const eventId = newId('evt');
    const ids: string[] = [];
    for (const r of rows) {
      const id = newId('whd');
      ids.push(id);
      await api.infra.pg.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_id, event_type, attempt, status, response_status, error, duration_ms, created_at, attempted_at, next_attempt_at)
         VALUES ($1, $2, $3, $4, 'invoice.paid', $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          id,
          hookId,
          a.accountId,
          eventId,
          r.attempt,
          r.status,
          r.response_status,
          r.error,
          r.duration_ms,
          r.at,
          r.sent,
          r.next,
        ],
      );
    }
    const res = await call('GET', `/v1/webhooks/${hookId}/deliveries`, { auth: a.auth.read });
    t.same(res.body.pagination, { page: 1, per_page: 20, total: 3 });
    t.same(
      res.body.data,
      [...rows].reverse().map((r, i) => ({
        id: ids[2 - i],
        event_id: eventId,
        event_type: 'invoice.paid',
        attempt: r.attempt,
        status: r.status,
        response_status: r.response_status,
        error: r.error,
        duration_ms: r.duration_ms,
        created_at: r.at,
        attempted_at: r.sent,
        next_attempt_at: r.next,
      })),
    );
    const page = await call('GET', `/v1/webhooks/${hookId}/deliveries?per_page=1&page=3`, { auth: a.auth.read });
    t.same(
      page.body.data.map((d: any) => d.attempt),
      [1],
    );
    t.equal((await call('GET', `/v1/webhooks/${hookId}/deliveries?per_page=101`, { auth: a.auth.read })).status, 422);
    t.equal(
      (await call('GET', `/v1/webhooks/${hookId}/deliveries`, { auth: b.auth.read })).status,
      404,
      "B can't read A's deliveries",
    );
    t.equal((await call('GET', '/v1/webhooks/wh_nope/deliveries', { auth: a.auth.read })).status, 404);
  });

  t.test('scopes: read lists and gets; writes need write; no token → 401', async (t) => {
    const post = await call('POST', '/v1/webhooks', {
      auth: a.auth.read,
      body: { url: 'https://example.com/h', events: ['invoice.paid'] },
    });
    t.equal(post.status, 403);
    t.equal(post.body.code, 'insufficient_scope');
    t.equal(
      (await call('PATCH', `/v1/webhooks/${hookId}`, { auth: a.auth.read, body: { status: 'disabled' } })).status,
      403,
    );
    t.equal((await call('DELETE', `/v1/webhooks/${hookId}`, { auth: a.auth.read })).status, 403);
    t.equal((await call('GET', '/v1/webhooks', { auth: a.auth.read })).status, 200);
    t.equal((await call('GET', `/v1/webhooks/${hookId}/deliveries`, { auth: a.auth.read })).status, 200);
    for (const [method, path] of [
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks'],
      ['GET', `/v1/webhooks/${hookId}`],
      ['PATCH', `/v1/webhooks/${hookId}`],
      ['DELETE', `/v1/webhooks/${hookId}`],
      ['GET', `/v1/webhooks/${hookId}/deliveries`],
    ]) {
      const res = await call(
        method!,
        path!,
        method === 'POST' || method === 'PATCH' ? { body: { status: 'disabled' } } : {},
      );
      t.equal(res.status, 401, `${method} ${path}`);
    }
  });

  t.test("isolation: B gets 404 for A's webhook and never lists it", async (t) => {
    t.equal((await call('GET', `/v1/webhooks/${hookId}`, { auth: b.auth.read })).status, 404);
    t.equal(
      (await call('PATCH', `/v1/webhooks/${hookId}`, { auth: b.auth.write, body: { status: 'disabled' } })).status,
      404,
    );
    t.equal((await call('DELETE', `/v1/webhooks/${hookId}`, { auth: b.auth.write })).status, 404);
    t.same((await call('GET', '/v1/webhooks', { auth: b.auth.read })).body, {
      data: [],
      pagination: { page: 1, per_page: 20, total: 0 },
    });
    t.equal(
      (await call('GET', `/v1/webhooks/${hookId}`, { auth: a.auth.read })).body.status,
      'enabled',
      "A's webhook untouched",
    );
  });

  t.test('DELETE → 204, then it is gone (with its deliveries)', async (t) => {
    const res = await fetch(`${api.url}/v1/webhooks/${hookId}`, { method: 'DELETE', headers: a.auth.write });
    t.equal(res.status, 204);
    t.equal(await res.text(), '');
    t.equal((await call('GET', `/v1/webhooks/${hookId}`, { auth: a.auth.read })).status, 404);
    t.equal((await call('GET', `/v1/webhooks/${hookId}/deliveries`, { auth: a.auth.read })).status, 404);
    t.equal((await call('DELETE', `/v1/webhooks/${hookId}`, { auth: a.auth.write })).status, 404, 'second delete');
    t.notOk(
      (await call('GET', '/v1/webhooks?per_page=100', { auth: a.auth.read })).body.data.some(
        (w: any) => w.id === hookId,
      ),
    );
    const left = await api.infra.pg.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [
      hookId,
    ]);
    t.equal(left.rows[0].n, 0);
  });
});

t.test('WEBHOOKS_ALLOW_PRIVATE_URLS=true admits http:// and local targets (development)', async (t) => {
  const config = await isolatedConfig(t, { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' });
  const api = await startApi(t, config);
  const call = client(api.url);
  const a = await createTestAccount(api.infra);
  for (const url of ['http://127.0.0.1:9999/hook', 'https://localhost/hook', 'http://[::1]:8080/']) {
    const res = await call('POST', '/v1/webhooks', { auth: a.auth.write, body: { url, events: ['invoice.paid'] } });
    t.equal(res.status, 201, url);
  }
  const ftp = await call('POST', '/v1/webhooks', {
    auth: a.auth.write,
    body: { url: 'ftp://127.0.0.1/', events: ['invoice.paid'] },
  });
  t.equal(ftp.status, 422);
  t.same(ftp.body.errors, [{ field: 'url', message: 'must use https:// or http://' }]);
});
