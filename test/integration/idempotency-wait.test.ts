import t from 'tap';
import { randomBytes } from 'node:crypto';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { PgIdempotencyStore } from '../../shared/http/idempotency.js';
import type { HttpReply, RequestContext } from '../../shared/http/context.js';

/**
 * A duplicate arriving while the first request still runs waits for it — woken by the first one's Postgres
 * NOTIFY, not by polling: the store here looks again only once an hour on its own (fallbackPollMs), so the
 * duplicate can only be answered in time through the notification. Real Postgres, the store the api uses.
 */
t.test('a waiting duplicate is woken by the first request finishing (LISTEN/NOTIFY)', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const acct = await createTestAccount(infra);
  let lookups = 0;
  const pool = new Proxy(infra.pg, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver);
      return (text: unknown, ...rest: unknown[]) => {
        if (typeof text === 'string' && /^\s*SELECT fingerprint, state/.test(text)) lookups++;
        return (target.query as (...a: unknown[]) => unknown).call(target, text, ...rest);
      };
    },
  });
  const store = new PgIdempotencyStore(pool, { secret: randomBytes(32), waitMs: 600_000, fallbackPollMs: 3_600_000 });
  const ctx = (key: string) =>
    ({
      method: 'POST',
      path: '/v1/things',
      rawQuery: '',
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      rawBody: Buffer.from('{"a":1}'),
      principal: { accountId: acct.accountId },
      requestId: 'r',
    }) as unknown as RequestContext;

  await t.test('completed: the duplicate replays the first answer', async (t) => {
    let finish!: (r: HttpReply) => void;
    let runs = 0;
    const first = store.run(ctx('k1'), 'POST /v1/things', () => {
      runs++;
      return new Promise<HttpReply>((resolve) => (finish = resolve));
    });
    await waitUntil(() => runs === 1, 'the first request is running');
    const duplicate = store.run(ctx('k1'), 'POST /v1/things', async () => {
      runs++;
      return { status: 500 };
    });
    // It looked, saw "running", listened and looked again: now it waits for the notification.
    await waitUntil(() => lookups >= 2, 'the duplicate is waiting');
    finish({ status: 201, body: { id: 'thing_1' } });
    t.equal((await first).status, 201);
    const replayed = await duplicate;
    t.equal(replayed.status, 201, 'answered long before any fallback poll');
    t.equal(replayed.headers?.['Idempotent-Replayed'], 'true');
    t.same(JSON.parse(String(replayed.raw)), { id: 'thing_1' });
    t.equal(runs, 1, 'the operation ran once');
    t.equal(lookups, 3, 'no polling: looked, listened and looked, then once after the notification');
  });

  await t.test('released (a 5xx is not kept): the duplicate runs it itself', async (t) => {
    let fail!: () => void;
    let runs = 0;
    const first = store.run(ctx('k2'), 'POST /v1/things', () => {
      runs++;
      return new Promise<HttpReply>((resolve) => (fail = () => resolve({ status: 503 })));
    });
    await waitUntil(() => runs === 1, 'the first request is running');
    const before = lookups;
    const duplicate = store.run(ctx('k2'), 'POST /v1/things', async () => {
      runs++;
      return { status: 201, body: { id: 'thing_2' } };
    });
    await waitUntil(() => lookups >= before + 2, 'the duplicate is waiting');
    fail();
    t.equal((await first).status, 503);
    t.equal((await duplicate).status, 201, 'woken by the release, it claimed the key and ran');
    t.equal(runs, 2);
  });
});
