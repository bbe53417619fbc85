import t from 'tap';
import { spawn } from 'node:child_process';
import { repoPath } from '../../shared/paths.js';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { StreamClient } from '../fixtures/usage-stream.js';
import { createMeter, iso, post, postJson, startConsumer, storedIds, waitForMeter } from './ingest-helpers.js';
import type { AccountLimits } from '../../shared/limits/account-limits.js';
import { CARD_ATTEMPTS_PER_HOUR } from '../../shared/limits/protection.js';

interface CliResult {
  code: number;
  json: any;
  stderr: any;
}

// Issue 16: no rate limit or quota existed anywhere — one account could starve every other one.
t.test('per-account limits: set by the operator, enforced at every door', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await startConsumer(t, config, { maxWaitMs: 100 });
  const infra = api.infra;
  const env = {
    ...process.env,
    DATABASE_URL: config.DATABASE_URL,
    NATS_URL: config.NATS_URL,
    CLICKHOUSE_URL: config.CLICKHOUSE_URL,
    NATS_NAMESPACE: config.NATS_NAMESPACE,
    SECRET_KEY: config.SECRET_KEY.toString('hex'),
  };
  const cli = (...args: string[]) =>
    new Promise<CliResult>((resolve, reject) => {
      const child = spawn(process.execPath, [repoPath('bin/meterline.js'), 'accounts', 'limits', ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      child.on('error', reject);
      child.on('exit', (code) =>
        resolve({ code: code ?? 1, json: out ? JSON.parse(out) : null, stderr: err ? JSON.parse(err) : null }),
      );
    });
  const inForce = (accountId: string, want: Partial<AccountLimits>) =>
    waitUntil(
      () =>
        Object.entries(want).every(
          ([k, v]) => api.service.protection.limits(accountId)[k as keyof AccountLimits] === v,
        ),
      'the api to see the new limits',
    );

  const noisy = await createTestAccount(infra);
  const quiet = await createTestAccount(infra);
  const noisyMeter = await createMeter(infra, noisy.accountId);
  const quietMeter = await createMeter(infra, quiet.accountId);
  await waitForMeter(api, noisyMeter, noisy.auth.write.authorization);
  await waitForMeter(api, quietMeter, quiet.auth.write.authorization);

  t.test('meterline accounts limits: prints, sets, validates', async (t) => {
    const shown = await cli('--account', noisy.accountId);
    t.equal(shown.code, 0, JSON.stringify(shown.stderr));
    t.same(shown.json.overrides, {});
    t.same(shown.json.limits, shown.json.defaults, 'defaults from config');
    t.equal(shown.json.limits.ingest_records_per_second, config.LIMIT_INGEST_RECORDS_PER_SECOND);

    const set = await cli(
      '--account',
      noisy.accountId,
      '--ingest-records-per-second',
      '100',
      '--requests-per-second',
      '5',
      '--max-meters',
      '2',
      '--max-webhooks',
      '1',
      '--max-payment-methods',
      '1',
    );
    t.equal(set.code, 0, JSON.stringify(set.stderr));
    t.same(set.json.overrides, {
      ingest_records_per_second: 100,
      requests_per_second: 5,
      max_meters: 2,
      max_webhooks: 1,
      max_payment_methods: 1,
    });
    const again = await cli('--account', noisy.accountId);
    t.same(
      again.json.limits,
      {
        ingest_records_per_second: 100,
        requests_per_second: 5,
        max_meters: 2,
        max_webhooks: 1,
        max_payment_methods: 1,
        attributed_records_per_second: config.LIMIT_ATTRIBUTED_RECORDS_PER_SECOND,
      },
      'kept (the emitter ceiling at its default)',
    );

    t.equal(
      (await cli('--account', noisy.accountId, '--max-meters', '0')).code,
      2,
      'not a positive integer → usage error',
    );
    const unknown = await cli('--account', 'acct_nope');
    t.equal(unknown.code, 1);
    t.equal(unknown.stderr.code, 'not_found');
    await inForce(noisy.accountId, { ingest_records_per_second: 100, requests_per_second: 5, max_meters: 2 });
  });

  t.test(
    'ingest counts records: over the limit → 429 with Retry-After and RateLimit headers; nothing of it stored',
    async (t) => {
      const ts = iso(Date.now() - 60_000);
      const batch = (prefix: string, n: number) =>
        Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, value: 1, timestamp: ts }));
      const path = `/v1/meters/${noisyMeter.id}/usage`;
      const first = await postJson(api.url, path, noisy.auth.write.authorization, batch('ok', 100));
      t.equal(first.status, 202, 'a full second’s worth in one batch');
      t.equal(
        first.headers.get('ratelimit-policy'),
        '"ingest";q=100;w=1',
        'a 202 says which policy it counted against',
      );
      t.match(first.headers.get('ratelimit'), /^"ingest";r=\d+;t=\d+$/, 'and what is left of it');
      t.ok(Number(/r=(\d+)/.exec(first.headers.get('ratelimit')!)![1]) < 100, 'less than the whole limit left');
      const over = await postJson(api.url, path, noisy.auth.write.authorization, batch('over', 100));
      t.equal(over.status, 429);
      t.equal(over.body.code, 'rate_limited');
      t.ok(Number(over.headers.get('retry-after')) >= 1, 'Retry-After');
      t.equal(over.headers.get('ratelimit-policy'), '"ingest";q=100;w=1');
      t.match(over.headers.get('ratelimit'), /^"ingest";r=\d+;t=\d+$/);
      const across = await postJson(
        api.url,
        '/v1/usage',
        noisy.auth.write.authorization,
        batch('x', 90).map((r) => ({ ...r, meter_id: noisyMeter.id })),
      );
      t.equal(across.status, 429, 'POST /v1/usage shares the same limit');

      const other = await postJson(
        api.url,
        `/v1/meters/${quietMeter.id}/usage`,
        quiet.auth.write.authorization,
        batch('quiet', 100),
      );
      t.equal(other.status, 202, 'another account is not affected');

      await waitUntil(
        async () => (await storedIds(infra, noisyMeter.id)).size >= 100,
        'the accepted batch in ClickHouse',
      );
      await waitUntil(
        async () => (await storedIds(infra, quietMeter.id)).size >= 100,
        'the other account’s batch in ClickHouse',
      );
      const stored = await storedIds(infra, noisyMeter.id);
      t.equal(stored.size, 100, 'exactly the accepted records');
      t.notOk(
        [...stored].some((id) => id.startsWith('over-') || id.startsWith('x-')),
        'no limited record was counted',
      );
    },
  );

  // Issue 24: the rate was charged before the 1,000-record check, so a refused oversized array (passing on a
  // full bucket, leaving it deep in debt) locked the caller's own ingest for seconds.
  t.test('a batch refused for its size costs nothing: a full second’s worth passes right after', async (t) => {
    const ts = iso(Date.now() - 60_000);
    const items = (prefix: string, n: number, meterId?: string) =>
      Array.from({ length: n }, (_, i) => ({
        id: `${prefix}-${i}`,
        value: 1,
        timestamp: ts,
        ...(meterId ? { meter_id: meterId } : {}),
      }));
    // The bucket refills at 100 records/s: after 1.5 s without ingest it is full, whatever came before.
    await new Promise((r) => setTimeout(r, 1_500));
    const W = noisy.auth.write.authorization;
    const oversized = await postJson(api.url, `/v1/meters/${noisyMeter.id}/usage`, W, items('big', 1001));
    t.equal(oversized.status, 422, '1,001 records on a meter: refused for its size');
    t.equal(oversized.headers.get('ratelimit'), null, 'and not counted against the rate');
    const across = await postJson(api.url, '/v1/usage', W, items('big-across', 5000, noisyMeter.id));
    t.equal(across.status, 422, '5,000 records over meters: refused for its size');
    t.equal((await postJson(api.url, '/v1/usage', W, [])).status, 422, 'an empty batch: refused');
    const stream = await StreamClient.open(api.url, W);
    t.teardown(() => stream.close());
    stream.send({ seq: 1, records: items('big-frame', 1001, noisyMeter.id) });
    await stream.waitForAnswers(1);
    t.equal(stream.answersTo(1)[0]?.error?.code, 'validation_failed', 'a 1,001-record frame: refused for its size');
    stream.close();
    const full = await postJson(api.url, `/v1/meters/${noisyMeter.id}/usage`, W, items('after-big', 100));
    t.equal(full.status, 202, 'the whole limit is still there');
  });

  t.test('the usage stream honours the same limit: a frame over it → rate_limited with retry_after', async (t) => {
    const ts = iso(Date.now() - 60_000);
    const stream = await StreamClient.open(api.url, noisy.auth.write.authorization);
    t.teardown(() => stream.close());
    // Two frames of a second's worth back to back: the second cannot fit whatever the refill did meanwhile.
    for (const seq of [1, 2])
      stream.send({
        seq,
        records: Array.from({ length: 100 }, (_, i) => ({
          id: `ws-${seq}-${i}`,
          meter_id: noisyMeter.id,
          value: 1,
          timestamp: ts,
        })),
      });
    await stream.waitForAnswers(2);
    const limited = stream.answers.filter((a) => a.error?.code === 'rate_limited');
    t.ok(
      limited.length >= 1,
      `a frame refused: ${JSON.stringify(stream.answers.map((a) => a.error?.code ?? a.accepted))}`,
    );
    for (const a of limited)
      t.ok(
        Number((a.error as { retry_after?: number }).retry_after) >= 1,
        'retry_after in seconds, as Retry-After over HTTP',
      );
  });

  t.test('requests per second on the control plane', async (t) => {
    const statuses = await Promise.all(
      Array.from(
        { length: 15 },
        async () => (await fetch(`${api.url}/v1/products`, { headers: noisy.auth.read })).status,
      ),
    );
    t.ok(statuses.includes(429), `some refused: ${statuses.join(',')}`);
    t.ok(statuses.includes(200), 'the first ones served');
    const res = await fetch(`${api.url}/v1/products`, { headers: quiet.auth.read });
    t.equal(res.status, 200, 'the other account is not affected');
    t.match(res.headers.get('ratelimit-policy'), /^"requests";q=\d+;w=1$/, 'a 200 carries the RateLimit fields too');
    t.match(res.headers.get('ratelimit'), /^"requests";r=\d+;t=\d+$/);
    await waitUntil(
      async () => (await fetch(`${api.url}/v1/products`, { headers: noisy.auth.read })).status === 200,
      'the rate to refill',
    );
  });

  t.test('quotas: meters, webhooks, payment methods → 409 quota_exceeded', async (t) => {
    t.equal((await cli('--account', noisy.accountId, '--requests-per-second', '1000')).code, 0);
    await inForce(noisy.accountId, { requests_per_second: 1000 });
    const W = noisy.auth.write;
    const meter = (n: number) =>
      postJson2(api.url, '/v1/meters', W, { name: `m${n}`, unit: 'calls', aggregation: 'sum' });
    // One meter exists already (made above): the limit of 2 leaves room for one more.
    t.equal((await meter(1)).status, 201);
    const third = await meter(2);
    t.equal(third.status, 409);
    t.equal(third.body.code, 'quota_exceeded');
    const count = await infra.pg.query('SELECT count(*)::int AS n FROM meters WHERE account_id = $1', [
      noisy.accountId,
    ]);
    t.equal(count.rows[0].n, 2, 'nothing over the quota was stored');

    t.equal(
      (await postJson2(api.url, '/v1/webhooks', W, { url: 'http://127.0.0.1:9/hook', events: ['invoice.created'] }))
        .status,
      201,
    );
    const hook = await postJson2(api.url, '/v1/webhooks', W, {
      url: 'http://127.0.0.1:9/hook2',
      events: ['invoice.created'],
    });
    t.equal(hook.status, 409);
    t.equal(hook.body.code, 'quota_exceeded');

    const card = (number: string) =>
      postJson2(api.url, '/v1/billing/payment-methods', W, {
        type: 'card',
        card: { number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' },
      });
    t.equal((await card('4242424242424242')).status, 201);
    const second = await card('5555555555554444');
    t.equal(second.status, 409);
    t.equal(second.body.code, 'quota_exceeded');
  });

  t.test('card additions are velocity-limited (declined ones count)', async (t) => {
    const statuses: number[] = [];
    for (let i = 0; i < CARD_ATTEMPTS_PER_HOUR + 2; i++) {
      const res = await postJson2(api.url, '/v1/billing/payment-methods', quiet.auth.write, {
        type: 'card',
        card: { number: '4000000000000002', exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: '123' },
      });
      statuses.push(res.status);
      if (res.status === 429) {
        t.equal(res.body.code, 'rate_limited');
        // The policy that refused first, then the others this request counted against.
        t.match(
          res.headers.get('ratelimit-policy'),
          new RegExp(`^"card-attempts";q=${CARD_ATTEMPTS_PER_HOUR};w=3600, "requests";q=\\d+;w=1$`),
        );
      }
    }
    t.same(
      statuses,
      [...Array(CARD_ATTEMPTS_PER_HOUR).fill(402), 429, 429],
      `${CARD_ATTEMPTS_PER_HOUR} tries an hour, then 429`,
    );
  });
});

async function postJson2(base: string, path: string, auth: { authorization: string }, body: unknown) {
  const res = await post(base, path, auth.authorization, body);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
