import t from 'tap';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import {
  createMeter,
  iso,
  post,
  postJson,
  setMeterStatus,
  startConsumer,
  startUsageApi,
  storedCount,
  storedIds,
  waitForMeter,
} from './ingest-helpers.js';

// POST /v1/meters/{id}/usage and POST /v1/usage against the real stack: every rule of docs/design.md §8,
// each batch outcome, 404/409, scopes, and what gets 202 reaching ClickHouse.
t.test('usage ingestion routes', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startUsageApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 50 });
  const infra = api.infra;
  const acct = await createTestAccount(infra);
  const other = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const counter = await createMeter(infra, acct.accountId, { type: 'counter' });
  const gauge = await createMeter(infra, acct.accountId, { type: 'gauge', aggregation: 'last' });
  const histogram = await createMeter(infra, acct.accountId, { type: 'histogram', aggregation: 'p99' });
  const inactive = await createMeter(infra, acct.accountId, { status: 'inactive' });
  const foreign = await createMeter(infra, other.accountId);
  await waitForMeter(api, counter, W);
  await waitForMeter(api, gauge, W);
  await waitForMeter(api, histogram, W);
  const now = Date.now();
  const ts = iso(now - 60_000);
  const path = (m: { id: string }) => `/v1/meters/${m.id}/usage`;

  t.test('one record → 202 with the stored record', async (t) => {
    const res = await postJson(api.url, path(counter), W, { value: 0.1, timestamp: ts, id: 'rec-single-1' });
    t.equal(res.status, 202);
    t.same(res.body, {
      id: 'rec-single-1',
      meter_id: counter.id,
      value: 0.1,
      timestamp: ts,
      received_at: res.body.received_at,
    });
    t.ok(Math.abs(Date.parse(res.body.received_at) - Date.now()) < 5_000, 'received_at is now');
    t.ok(res.headers.get('x-request-id'));

    const assigned = await postJson(api.url, path(counter), W, { value: 2, timestamp: ts });
    t.equal(assigned.status, 202);
    t.match(assigned.body.id, /^use_[0-9A-Za-z]{22}$/, 'the server assigns a use_ id');

    const plusTwo = `${iso(now + 2 * 3600_000 - 60_000).slice(0, 19)}+02:00`; // the same instant, written in UTC+2
    const offset = await postJson(api.url, path(gauge), W, { value: -3.5, timestamp: plusTwo });
    t.equal(offset.status, 202, 'gauges take negative values; offsets are accepted');
    t.equal(offset.body.timestamp, iso(Math.floor((now - 60_000) / 1000) * 1000), 'the timestamp is normalised to UTC');

    // Two requests may travel in two consumer batches: wait for both, then check both are there.
    await waitUntil(async () => {
      const ids = await storedIds(infra, counter.id);
      return ids.has('rec-single-1') && ids.has(assigned.body.id);
    }, 'both records in ClickHouse');
    t.ok((await storedIds(infra, counter.id)).has(assigned.body.id));
  });

  t.test('every validation rule → 422 naming the field', async (t) => {
    const cases: [string, unknown, { field: string; message: RegExp }[], { id: string } | undefined][] = [
      ['missing value', { timestamp: ts }, [{ field: 'value', message: /required/ }], undefined],
      ['missing timestamp', { value: 1 }, [{ field: 'timestamp', message: /required/ }], undefined],
      [
        'value not a number',
        { value: '1', timestamp: ts },
        [{ field: 'value', message: /^must be a JSON number, not a string$/ }],
        undefined,
      ],
      [
        'timestamp as epoch seconds',
        { value: 1, timestamp: 1_780_000_000 },
        [
          {
            field: 'timestamp',
            message: /^must be an RFC 3339 string with an offset, e\.g\. 2026-11-21T10:00:00Z, not a JSON number$/,
          },
        ],
        undefined,
      ],
      [
        'value infinite (1e999)',
        '{"value": 1e999, "timestamp": "TS"}',
        [{ field: 'value', message: /finite/ }],
        undefined,
      ],
      [
        'negative counter',
        { value: -1, timestamp: ts },
        [{ field: 'value', message: /greater than or equal to 0/ }],
        undefined,
      ],
      [
        'too many decimals',
        { value: 0.1234567891, timestamp: ts },
        [{ field: 'value', message: /9 decimal places/ }],
        undefined,
      ],
      [
        'tiny value beyond 9 decimals',
        { value: 1e-10, timestamp: ts },
        [{ field: 'value', message: /9 decimal places/ }],
        undefined,
      ],
      ['value too large', { value: 2e18, timestamp: ts }, [{ field: 'value', message: /between/ }], undefined],
      [
        'integer above 2^53 (would be stored as …680)',
        '{"value": 123456789012345678, "timestamp": "TS"}',
        [{ field: 'value', message: /at most 9007199254740991/ }],
        undefined,
      ],
      [
        '17 significant digits',
        '{"value": 1234567890.1234567, "timestamp": "TS"}',
        [{ field: 'value', message: /significant digits/ }],
        undefined,
      ],
      [
        'timestamp without offset',
        { value: 1, timestamp: ts.replace('Z', '') },
        [{ field: 'timestamp', message: /RFC 3339/ }],
        undefined,
      ],
      [
        'timestamp not a date',
        { value: 1, timestamp: 'yesterday' },
        [{ field: 'timestamp', message: /RFC 3339/ }],
        undefined,
      ],
      [
        'impossible date',
        { value: 1, timestamp: '2026-02-30T00:00:00Z' },
        [{ field: 'timestamp', message: /RFC 3339/ }],
        undefined,
      ],
      [
        'timestamp older than 35 days',
        { value: 1, timestamp: iso(now - 36 * 86_400_000) },
        [{ field: 'timestamp', message: /35 days/ }],
        undefined,
      ],
      [
        'timestamp more than 5 minutes ahead',
        { value: 1, timestamp: iso(now + 6 * 60_000) },
        [{ field: 'timestamp', message: /5 minutes/ }],
        undefined,
      ],
      [
        'id over 128 characters',
        { value: 1, timestamp: ts, id: 'x'.repeat(129) },
        [{ field: 'id', message: /128/ }],
        undefined,
      ],
      [
        'empty id',
        { value: 1, timestamp: ts, id: '' },
        [{ field: 'id', message: /fewer than 1|at least 1|1 char/ }],
        undefined,
      ],
      [
        'unknown field',
        { value: 1, timestamp: ts, unit: 'x' },
        [{ field: 'unit', message: /not a known field/ }],
        undefined,
      ],
      ['body not an object', 42, [{ field: '', message: /object/ }], undefined],
      [
        'several problems at once',
        { value: -1, timestamp: 'nope' },
        [
          { field: 'value', message: /0/ },
          { field: 'timestamp', message: /RFC 3339/ },
        ],
        undefined,
      ],
    ];
    for (const [name, body, errors] of cases) {
      const res =
        typeof body === 'string'
          ? await fetch(api.url + path(counter), {
              method: 'POST',
              headers: { authorization: W, 'content-type': 'application/json' },
              body: body.replace('TS', ts),
            })
          : await post(api.url, path(counter), W, body);
      const doc = (await res.json()) as any;
      t.equal(res.status, 422, `${name}: 422`);
      // A value no meter can store exactly as written is refused with its own code, never rounded.
      const inexact =
        errors.length === 1 && /decimal|between|9007199254740991|significant/.test(errors[0]!.message.source);
      t.equal(doc.code, inexact ? 'value_out_of_range' : 'validation_failed', `${name}: code`);
      t.equal(doc.errors?.length, errors.length, `${name}: ${JSON.stringify(doc.errors)}`);
      for (const e of errors) {
        t.ok(
          doc.errors?.some((x: any) => x.field === e.field && e.message.test(x.message)),
          `${name}: ${e.field} ${e.message} in ${JSON.stringify(doc.errors)}`,
        );
      }
    }
    t.equal(
      (await postJson(api.url, path(counter), W, { value: 0.123456789, timestamp: ts })).status,
      202,
      'exactly 9 decimals is fine',
    );
    t.equal((await postJson(api.url, path(counter), W, { value: 1e-9, timestamp: ts })).status, 202, '1e-9 is fine');
    t.equal(
      (await postJson(api.url, path(counter), W, { value: 1, timestamp: iso(now - 34 * 86_400_000) })).status,
      202,
      '34 days ago is fine',
    );
    t.equal(
      (await postJson(api.url, path(counter), W, { value: 1, timestamp: iso(now + 4 * 60_000) })).status,
      202,
      '4 minutes ahead is fine',
    );
    t.equal(
      (await postJson(api.url, path(counter), W, { value: 1, timestamp: ts, id: 'y'.repeat(128) })).status,
      202,
      'a 128-character id is fine',
    );
    const noBody = await fetch(api.url + path(counter), {
      method: 'POST',
      headers: { authorization: W, 'content-type': 'application/json' },
    });
    t.equal(noBody.status, 422, 'no body → 422');
    const malformed = await fetch(api.url + path(counter), {
      method: 'POST',
      headers: { authorization: W, 'content-type': 'application/json' },
      body: '{"value": 1,',
    });
    t.equal(malformed.status, 400);
    t.equal(((await malformed.json()) as any).code, 'malformed_json');
  });

  t.test('meters: unknown, another account’s, inactive, deactivated later', async (t) => {
    const unknown = await postJson(api.url, '/v1/meters/mtr_doesnotexist/usage', W, { value: 1, timestamp: ts });
    t.equal(unknown.status, 404);
    t.equal(unknown.body.code, 'not_found');
    const theirs = await postJson(api.url, path(foreign), W, { value: 1, timestamp: ts });
    t.equal(theirs.status, 404, 'another account’s meter looks missing');
    t.equal((await postJson(api.url, path(foreign), W, [{ value: 1, timestamp: ts }])).status, 404, 'also for batches');
    await waitForMeter(api, inactive, W, 'inactive');
    const off = await postJson(api.url, path(inactive), W, { value: 1, timestamp: ts });
    t.equal(off.status, 409);
    t.equal(off.body.code, 'meter_inactive');

    const m = await createMeter(infra, acct.accountId);
    await waitForMeter(api, m, W);
    t.equal((await postJson(api.url, path(m), W, { value: 1, timestamp: ts })).status, 202);
    await setMeterStatus(infra, m, 'inactive');
    const started = Date.now();
    await waitUntil(
      async () => (await postJson(api.url, path(m), W, { value: 1, timestamp: ts })).status === 409,
      'the deactivation to reach the ingress',
      30_000,
    );
    t.ok(Date.now() - started < 2_000, `deactivation took effect in ${Date.now() - started} ms (≤ 2 s)`);
    await setMeterStatus(infra, m, 'active');
    await waitUntil(
      async () => (await postJson(api.url, path(m), W, { value: 1, timestamp: ts })).status === 202,
      'the reactivation to reach the ingress',
      30_000,
    );
  });

  t.test('scopes: a read token gets 403, no token 401', async (t) => {
    const res = await postJson(api.url, path(counter), acct.auth.read.authorization, { value: 1, timestamp: ts });
    t.equal(res.status, 403);
    t.equal(res.body.code, 'insufficient_scope');
    t.match(res.headers.get('www-authenticate'), /insufficient_scope.*scope="write"/);
    const batch = await postJson(api.url, '/v1/usage', acct.auth.read.authorization, [
      { meter_id: counter.id, value: 1, timestamp: ts },
    ]);
    t.equal(batch.status, 403);
    const anon = await fetch(api.url + path(counter), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    t.equal(anon.status, 401);
    t.equal(
      (await postJson(api.url, path(counter), acct.auth.admin.authorization, { value: 1, timestamp: ts })).status,
      202,
      'write ⊆ admin',
    );
  });

  t.test('batch on one meter: per-record results', async (t) => {
    const res = await postJson(api.url, path(counter), W, [
      { value: 1, timestamp: ts, id: 'b-1' },
      { value: -1, timestamp: ts, id: 'b-2' },
      { value: 2, timestamp: ts },
      { value: 3, timestamp: 'soon', extra: true },
    ]);
    t.equal(res.status, 202);
    t.equal(res.body.accepted, 2);
    t.equal(res.body.rejected, 2);
    t.same(res.body.results[0], { index: 0, status: 'accepted', id: 'b-1' });
    t.equal(res.body.results[1].status, 'rejected');
    t.equal(res.body.results[1].error.code, 'validation_failed');
    t.same(res.body.results[1].error.errors, [
      { field: 'value', message: 'must be greater than or equal to 0 for a counter meter' },
    ]);
    t.match(res.body.results[2], { index: 2, status: 'accepted', id: /^use_/ });
    t.same(res.body.results[3].error.errors.map((e: any) => e.field).sort(), ['extra', 'timestamp']);
    await waitUntil(async () => {
      const ids = await storedIds(infra, counter.id);
      return ids.has('b-1') && ids.has(res.body.results[2].id);
    }, 'the accepted batch records in ClickHouse');
    t.notOk((await storedIds(infra, counter.id)).has('b-2'), 'rejected records are not stored');

    const allBad = await postJson(api.url, path(counter), W, [{ value: -1, timestamp: ts }, { timestamp: ts }]);
    t.equal(allBad.status, 422, 'all invalid → 422');
    t.same(allBad.body.errors, [
      { field: '[0].value', message: 'must be greater than or equal to 0 for a counter meter' },
      { field: '[1].value', message: 'is required' },
    ]);
    const empty = await postJson(api.url, path(counter), W, []);
    t.equal(empty.status, 422);
    t.match(empty.body.errors[0].message, /at least 1/);
    const tooMany = await postJson(
      api.url,
      path(counter),
      W,
      Array.from({ length: 1001 }, () => ({ value: 1, timestamp: ts })),
    );
    t.equal(tooMany.status, 422);
    t.match(tooMany.body.errors[0].message, /at most 1000/);
    const full = await postJson(
      api.url,
      path(counter),
      W,
      Array.from({ length: 1000 }, (_, i) => ({ value: i, timestamp: ts, id: `full-${i}` })),
    );
    t.equal(full.status, 202);
    t.equal(full.body.accepted, 1000);
  });

  t.test('batch across meters: POST /v1/usage', async (t) => {
    const res = await postJson(api.url, '/v1/usage', W, [
      { meter_id: counter.id, value: 5, timestamp: ts, id: 'x-1' },
      { meter_id: gauge.id, value: -5, timestamp: ts, id: 'x-2' },
      { meter_id: 'mtr_nope', value: 1, timestamp: ts },
      { meter_id: foreign.id, value: 1, timestamp: ts },
      { meter_id: inactive.id, value: 1, timestamp: ts },
      { meter_id: counter.id, value: -5, timestamp: ts },
      { value: 1, timestamp: ts },
    ]);
    t.equal(res.status, 202);
    t.equal(res.body.accepted, 2);
    t.equal(res.body.rejected, 5);
    t.same(
      res.body.results.map((r: any) => r.error?.code ?? r.status),
      ['accepted', 'accepted', 'not_found', 'not_found', 'meter_inactive', 'validation_failed', 'validation_failed'],
    );
    t.same(res.body.results[6].error.errors, [{ field: 'meter_id', message: 'is required' }]);
    await waitUntil(
      async () => (await storedIds(infra, gauge.id)).has('x-2') && (await storedIds(infra, counter.id)).has('x-1'),
      'both meters’ records stored',
    );

    const none = await postJson(api.url, '/v1/usage', W, [
      { meter_id: 'mtr_nope', value: 1, timestamp: ts },
      { meter_id: inactive.id, value: 1, timestamp: ts },
    ]);
    t.equal(none.status, 422);
    t.same(none.body.errors, [
      { field: '[0].meter_id', message: 'does not exist' },
      { field: '[1].meter_id', message: 'is inactive' },
    ]);
    const notArray = await postJson(api.url, '/v1/usage', W, { meter_id: counter.id, value: 1, timestamp: ts });
    t.equal(notArray.status, 422);
    t.match(notArray.body.errors[0].message, /array/);
  });

  t.test('a retried record (same id, meter, timestamp) is stored once', async (t) => {
    const m = await createMeter(infra, acct.accountId);
    await waitForMeter(api, m, W);
    for (let i = 0; i < 3; i++)
      t.equal((await postJson(api.url, path(m), W, { value: 7, timestamp: ts, id: 'retry-me' })).status, 202);
    t.equal(
      (
        await postJson(api.url, path(m), W, [
          { value: 7, timestamp: ts, id: 'retry-me' },
          { value: 7, timestamp: ts, id: 'retry-me' },
        ])
      ).status,
      202,
    );
    t.equal(
      (await postJson(api.url, path(m), W, { value: 1, timestamp: ts, id: 'tab\there\nand\\slash' })).status,
      202,
      'ids with TSV control characters',
    );
    await waitUntil(async () => (await storedCount(infra, m.id)) === 2, 'two distinct records', 30_000);
    t.same([...(await storedIds(infra, m.id))].sort(), ['retry-me', 'tab\there\nand\\slash']);
  });
});
