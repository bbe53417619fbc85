import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm, type KV } from '@nats-io/kv';
import { freePort, isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startNats } from '../../infra/stack/servers.js';
import { AGGREGATIONS, METER_TYPES, decodeMeter, putMeter, type MeterRecord } from '../../shared/meters/record.js';
import { newId } from '../../shared/ids.js';
import { closeInfra } from '../../shared/infra.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function client(url: string) {
  return async (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
}

async function kvRecord(kv: KV, id: string): Promise<MeterRecord | null> {
  const e = await kv.get(id);
  return e && e.operation === 'PUT' ? decodeMeter(e.string()) : null;
}

t.test('meters', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const call = await client(api.url);
  const acct = await createTestAccount(api.infra);
  const kv = await new Kvm(api.infra.nats).open(api.infra.natsNames.meterBucket);
  const w = acct.tokens.write;

  t.test('create → 201 + Location, exact shape, and in the KV registry before the 201', async (t) => {
    const res = await call('POST', '/v1/meters', {
      token: w,
      body: { name: 'API requests', unit: 'requests', aggregation: 'sum' },
    });
    t.equal(res.status, 201);
    t.match(res.body.id, /^mtr_[0-9A-Za-z]{22}$/);
    t.equal(res.headers.get('location'), `/v1/meters/${res.body.id}`);
    t.same(Object.keys(res.body).sort(), [
      'aggregation',
      'created_at',
      'dimensions',
      'id',
      'key',
      'name',
      'scope',
      'status',
      'type',
      'unique_by',
      'unit',
      'updated_at',
    ]);
    t.match(res.body, {
      name: 'API requests',
      unit: 'requests',
      type: 'counter',
      aggregation: 'sum',
      status: 'active',
      scope: 'account',
    });
    t.match(res.body.created_at, ISO_MS);
    t.equal(res.body.updated_at, res.body.created_at);
    // No waiting: the record was acknowledged by JetStream before the response was sent.
    t.same(await kvRecord(kv, res.body.id), {
      id: res.body.id,
      account_id: acct.accountId,
      name: 'API requests',
      type: 'counter',
      aggregation: 'sum',
      status: 'active',
      updated_at_ms: Date.parse(res.body.updated_at),
    });
    const got = await call('GET', `/v1/meters/${res.body.id}`, { token: acct.tokens.read });
    t.same(got.body, res.body);
  });

  t.test('every type with every allowed aggregation', async (t) => {
    for (const type of METER_TYPES) {
      for (const aggregation of AGGREGATIONS[type]) {
        const res = await call('POST', '/v1/meters', {
          token: w,
          body: {
            name: `${type} ${aggregation}`,
            unit: 'u',
            type,
            aggregation,
            ...(aggregation === 'unique_count' ? { unique_by: 'user' } : {}),
          },
        });
        t.equal(res.status, 201, `${type}/${aggregation}`);
        t.match(res.body, { type, aggregation });
        t.match(await kvRecord(kv, res.body.id), { type, aggregation, status: 'active' });
      }
    }
  });

  t.test('validation errors → 422 naming the field; nothing stored', async (t) => {
    const before = (await api.infra.pg.query('SELECT count(*)::int AS n FROM meters')).rows[0].n;
    const cases: [string, unknown, string, RegExp?][] = [
      ['missing name', { unit: 'u', aggregation: 'sum' }, 'name', /required/],
      ['blank name', { name: ' ', unit: 'u', aggregation: 'sum' }, 'name', /blank/],
      ['missing unit', { name: 'n', aggregation: 'sum' }, 'unit', /required/],
      ['blank unit', { name: 'n', unit: '  ', aggregation: 'sum' }, 'unit', /blank/],
      ['missing aggregation', { name: 'n', unit: 'u' }, 'aggregation', /required/],
      ['unknown aggregation', { name: 'n', unit: 'u', aggregation: 'median' }, 'aggregation', /one of/],
      ['unknown type', { name: 'n', unit: 'u', type: 'timer', aggregation: 'sum' }, 'type', /one of/],
      [
        'gauge cannot sum',
        { name: 'n', unit: 'u', type: 'gauge', aggregation: 'sum' },
        'aggregation',
        /last, max, min, avg for a gauge/,
      ],
      [
        'counter has no p99',
        { name: 'n', unit: 'u', aggregation: 'p99' },
        'aggregation',
        /sum, count, unique_count for a counter/,
      ],
      [
        'unknown field',
        { name: 'n', unit: 'u', aggregation: 'sum', status: 'inactive' },
        'status',
        /not a known field/,
      ],
      ['name not a string', { name: 5, unit: 'u', aggregation: 'sum' }, 'name', /string/],
    ];
    for (const [what, body, field, message] of cases) {
      const res = await call('POST', '/v1/meters', { token: w, body });
      t.equal(res.status, 422, what);
      const err = res.body.errors?.find((e: { field: string }) => e.field === field);
      t.ok(err, `${what} names ${field}: ${JSON.stringify(res.body.errors)}`);
      if (message && err) t.match(err.message, message, what);
    }
    t.equal((await api.infra.pg.query('SELECT count(*)::int AS n FROM meters')).rows[0].n, before);
  });

  t.test('PATCH name, unit, status; deactivation and reactivation reach the KV registry at once', async (t) => {
    const m = (
      await call('POST', '/v1/meters', {
        token: w,
        body: { name: 'Latency', unit: 'ms', type: 'histogram', aggregation: 'p99' },
      })
    ).body;
    const renamed = await call('PATCH', `/v1/meters/${m.id}`, {
      token: w,
      body: { name: 'Latency (edge)', unit: 'milliseconds' },
    });
    t.equal(renamed.status, 200);
    t.match(renamed.body, {
      id: m.id,
      name: 'Latency (edge)',
      unit: 'milliseconds',
      type: 'histogram',
      aggregation: 'p99',
      status: 'active',
      created_at: m.created_at,
    });

    const off = await call('PATCH', `/v1/meters/${m.id}`, { token: w, body: { status: 'inactive' } });
    t.equal(off.status, 200);
    t.equal(off.body.status, 'inactive');
    t.match(await kvRecord(kv, m.id), { id: m.id, status: 'inactive', updated_at_ms: Date.parse(off.body.updated_at) });

    const on = await call('PATCH', `/v1/meters/${m.id}`, { token: w, body: { status: 'active' } });
    t.equal(on.body.status, 'active');
    t.match(await kvRecord(kv, m.id), { status: 'active', updated_at_ms: Date.parse(on.body.updated_at) });

    const same = await call('PATCH', `/v1/meters/${m.id}`, {
      token: w,
      body: { type: 'histogram', aggregation: 'p99', name: 'L' },
    });
    t.equal(same.status, 200, 'restating the fixed fields is fine');
    for (const [body, field] of [
      [{ type: 'gauge' }, 'type'],
      [{ aggregation: 'p50' }, 'aggregation'],
      [{ status: 'paused' }, 'status'],
      [{ name: '' }, 'name'],
      [{ unit: ' ' }, 'unit'],
      [{ color: 'red' }, 'color'],
      [{}, ''],
    ] as [unknown, string][]) {
      const res = await call('PATCH', `/v1/meters/${m.id}`, { token: w, body });
      t.equal(res.status, 422, JSON.stringify(body));
      t.equal(res.body.errors[0].field, field, JSON.stringify(body));
    }
    const fixed = await call('PATCH', `/v1/meters/${m.id}`, { token: w, body: { aggregation: 'p50' } });
    t.match(fixed.body.errors[0].message, /cannot be changed/);
    const after = await call('GET', `/v1/meters/${m.id}`, { token: w });
    t.match(after.body, { type: 'histogram', aggregation: 'p99', name: 'L' });
    t.equal(
      (await call('PATCH', '/v1/meters/mtr_doesnotexist000000000000', { token: w, body: { name: 'x' } })).status,
      404,
    );
    t.equal((await call('GET', '/v1/meters/nonsense', { token: w })).status, 404);
  });

  t.test('list: defaults 1 and 20, totals, status filter, newest first, bounds', async (t) => {
    const other = await createTestAccount(api.infra);
    const call2 = (method: string, path: string, body?: unknown) =>
      call(method, path, { token: other.tokens.write, body });
    const ids: string[] = [];
    for (let i = 0; i < 22; i++)
      ids.push((await call2('POST', '/v1/meters', { name: `m${i}`, unit: 'u', aggregation: 'count' })).body.id);
    for (const id of ids.slice(0, 3)) await call2('PATCH', `/v1/meters/${id}`, { status: 'inactive' });
    const newest = [...ids].reverse();

    const first = await call2('GET', '/v1/meters');
    t.same(first.body.pagination, { page: 1, per_page: 20, total: 22 });
    t.same(
      first.body.data.map((m: { id: string }) => m.id),
      newest.slice(0, 20),
    );
    const second = await call2('GET', '/v1/meters?page=2');
    t.same(
      second.body.data.map((m: { id: string }) => m.id),
      newest.slice(20),
    );
    const inactive = await call2('GET', '/v1/meters?status=inactive');
    t.same(inactive.body.pagination, { page: 1, per_page: 20, total: 3 });
    t.same(
      inactive.body.data.map((m: { id: string }) => m.id),
      ids.slice(0, 3).reverse(),
    );
    t.ok(inactive.body.data.every((m: { status: string }) => m.status === 'inactive'));
    const active = await call2('GET', '/v1/meters?status=active&per_page=5&page=4');
    t.same(active.body.pagination, { page: 4, per_page: 5, total: 19 });
    t.same(
      active.body.data.map((m: { id: string }) => m.id),
      newest.slice(0, 19).slice(15, 19),
    );

    await api.infra.pg.query("UPDATE meters SET created_at = '2026-02-01T00:00:00Z' WHERE account_id = $1", [
      other.accountId,
    ]);
    const all = await call2('GET', '/v1/meters?per_page=100');
    t.same(
      all.body.data.map((m: { id: string }) => m.id),
      [...ids].sort().reverse(),
      'equal times: id descending',
    );

    for (const [qs, field] of [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['status=paused', 'status'],
      ['foo=1', 'foo'],
    ]) {
      const res = await call2('GET', `/v1/meters?${qs}`);
      t.equal(res.status, 422, qs);
      t.equal(res.body.errors[0].field, field, qs);
    }
  });

  t.test('reconcile on start repairs the KV registry from Postgres', async (t) => {
    const deleted = (await call('POST', '/v1/meters', { token: w, body: { name: 'a', unit: 'u', aggregation: 'sum' } }))
      .body;
    const tampered = (
      await call('POST', '/v1/meters', { token: w, body: { name: 'b', unit: 'u', aggregation: 'sum' } })
    ).body;
    const lostCommit = (
      await call('POST', '/v1/meters', { token: w, body: { name: 'c', unit: 'u', aggregation: 'sum' } })
    ).body;
    // Deleted behind its back.
    await kv.purge(deleted.id);
    // A record Postgres disagrees with (another value written by hand).
    await putMeter(kv, { ...(await kvRecord(kv, tampered.id))!, aggregation: 'count' });
    // A deactivation whose KV put succeeded but whose COMMIT never happened: newer in KV, older in Postgres.
    const rec = (await kvRecord(kv, lostCommit.id))!;
    await putMeter(kv, { ...rec, status: 'inactive', updated_at_ms: rec.updated_at_ms + 5_000 });
    // A create that never committed (old) and one that may still be in its transaction (fresh).
    const orphanOld = newId('mtr');
    const orphanFresh = newId('mtr');
    await putMeter(kv, {
      id: orphanOld,
      account_id: acct.accountId,
      type: 'counter',
      aggregation: 'sum',
      status: 'active',
      updated_at_ms: Date.now() - 10 * 60_000,
    });
    await putMeter(kv, {
      id: orphanFresh,
      account_id: acct.accountId,
      type: 'counter',
      aggregation: 'sum',
      status: 'active',
      updated_at_ms: Date.now(),
    });

    await startApi(t, config); // a second api process starting: it reconciles before listening

    t.same(await kvRecord(kv, deleted.id), {
      id: deleted.id,
      account_id: acct.accountId,
      name: deleted.name,
      type: 'counter',
      aggregation: 'sum',
      status: 'active',
      updated_at_ms: Date.parse(deleted.updated_at),
    });
    t.match(await kvRecord(kv, tampered.id), { aggregation: 'sum', updated_at_ms: Date.parse(tampered.updated_at) });
    t.match(await kvRecord(kv, lostCommit.id), { status: 'active', updated_at_ms: Date.parse(lostCommit.updated_at) });
    t.equal(await kvRecord(kv, orphanOld), null, 'a meter Postgres never committed is removed');
    t.ok(await kvRecord(kv, orphanFresh), 'a fresh record may belong to a create in flight: kept for now');
  });

  t.test('a KV failure rolls the change back (503, nothing stored)', async (t) => {
    // A private NATS server, so that stopping it disturbs nobody else.
    const dir = await mkdtemp(join(tmpdir(), 'meterline-nats-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const port = await freePort();
    let nats = await startNats({ dir, port });
    t.teardown(() => nats.stop().catch(() => undefined));
    const cfg = await isolatedConfig(t, { NATS_URL: nats.url });
    const priv = await startApi(t, cfg);
    const pcall = await client(priv.url);
    const a = await createTestAccount(priv.infra);
    const m = (
      await pcall('POST', '/v1/meters', {
        token: a.tokens.write,
        body: { name: 'kept', unit: 'u', aggregation: 'sum' },
      })
    ).body;
    t.ok(m.id);

    await nats.stop();
    const created = await pcall('POST', '/v1/meters', {
      token: a.tokens.write,
      body: { name: 'lost', unit: 'u', aggregation: 'sum' },
    });
    t.equal(created.status, 503);
    t.equal(created.body.code, 'unavailable');
    t.ok(created.headers.get('retry-after'));
    const patched = await pcall('PATCH', `/v1/meters/${m.id}`, { token: a.tokens.write, body: { status: 'inactive' } });
    t.equal(patched.status, 503);
    const rows = await priv.infra.pg.query('SELECT name, status FROM meters WHERE account_id = $1', [a.accountId]);
    t.same(rows.rows, [{ name: 'kept', status: 'active' }], 'neither the create nor the deactivation committed');

    // NATS back: the api reconnects and meters can be created again.
    nats = await startNats({ dir, port });
    await waitUntil(
      async () =>
        (
          await pcall('POST', '/v1/meters', {
            token: a.tokens.write,
            body: { name: 'again', unit: 'u', aggregation: 'sum' },
          })
        ).status === 201,
      'meter creation after NATS restarted',
      30_000,
      200,
    );
    // Stop this api and close its connections while its private NATS still runs: the teardowns above stop
    // that server first, and a client left connected to it would retry forever and keep the file alive.
    await priv.service.stop();
    await closeInfra(priv.infra);
  });
});
