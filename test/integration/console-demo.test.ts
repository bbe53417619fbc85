import t from 'tap';
import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { issueAccessToken } from '../../shared/auth/access-tokens.js';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { startConsoleApi } from '../fixtures/console.js';
import { startConsumer } from './ingest-helpers.js';
import { createDemoAccount } from '../../services/console/demo.js';
import { firstRunLines } from '../../services/console/first-run.js';
import { CONSOLE_CLIENT_ID, registerConsoleClient } from '../../services/console/client.js';

/**
 * `meterline accounts create --demo` (services/console/demo.ts) against the real api and servers, the
 * first-run hint of `npm start`, and the console's idempotent client registration.
 */
t.test('first run: the hint, then a demo account with a meter, usage, a subscription and a card', async (t) => {
  const world = await startConsoleApi(t);
  await startConsumer(t, world.config, { maxWaitMs: 100 });
  t.same(await firstRunLines(world.config), [
    `console: ${world.base}/console`,
    'no account yet — in another terminal, create one with demo data (it prints the email and password to sign in with):',
    '  npx meterline accounts create --demo',
  ]);

  const demo = await createDemoAccount(world.infra.pg, world.config);
  t.match(demo, {
    email: /^demo-[0-9a-f]{6}@example\.com$/,
    password: /^[A-Za-z0-9_-]{16}$/,
    operator: true,
    usage_records: 72,
    console_url: `${world.base}/console`,
  });
  t.same(await firstRunLines(world.config), [`console: ${world.base}/console`], 'no hint once an account exists');

  await t.test('/console/ (a trailing slash) is the console too: a permanent redirect, the query kept', async (t) => {
    for (const [path, location] of [
      ['/console/', '/console'],
      ['/console/?code=abc&state=xyz', '/console?code=abc&state=xyz'],
    ]) {
      const r = await fetch(world.base + path, { redirect: 'manual' });
      t.equal(r.status, 308, path);
      t.equal(r.headers.get('location'), location);
    }
    const followed = await fetch(`${world.base}/console/`);
    t.equal(followed.status, 200, 'followed: the console page');
    t.match(followed.headers.get('content-type'), /^text\/html/);
  });

  const keys = new SigningKeys(world.infra.pg, world.config.SECRET_KEY);
  await keys.load();
  const { token } = await issueAccessToken(
    keys,
    { accountId: demo.account_id, userId: demo.user_id, clientId: CONSOLE_CLIENT_ID, scopes: ['read'] },
    { issuer: world.base, ttlSeconds: 300 },
  );
  const get = async (path: string) => (await callJson(world.base, token, 'GET', path)).body;

  t.match(await get(`/v1/meters/${demo.meter_id}`), { name: 'API requests', status: 'active', aggregation: 'sum' });
  const sub = await get(`/v1/subscriptions/${demo.subscription_id}`);
  t.equal(sub.status, 'active');
  t.equal(sub.items.length, 2);
  t.equal(sub.items[1].meter_id, demo.meter_id, 'the metered item bills the demo meter');
  t.match(await get('/v1/billing'), { payment_method: { id: demo.payment_method_id, last4: '4242' } });

  const today = new Date().toISOString().slice(0, 10);
  const fourDaysAgo = new Date(Date.now() - 4 * 86_400_000).toISOString().slice(0, 10);
  let usage: any;
  await waitUntil(
    async () => {
      usage = await get(`/v1/meters/${demo.meter_id}/usage?start_date=${fourDaysAgo}&end_date=${today}&window=hour`);
      return usage.count === 72;
    },
    'the demo usage to be queryable',
    30_000,
    200,
  );
  t.equal(
    usage.data.filter((w: { count: number }) => w.count > 0).length,
    72,
    'one record in each of the last 72 hours',
  );
  t.ok(usage.data.every((w: { value: number }) => w.value >= 0));

  await t.rejects(
    createDemoAccount(world.infra.pg, world.config, { email: demo.email }),
    { code: 'email_taken' },
    'the same email twice is refused',
  );
});

t.test('the demo needs the api running: a clear message, nothing created', async (t) => {
  const config = await isolatedConfig(t, { PUBLIC_BASE_URL: 'http://127.0.0.1:9' });
  const infra = await testInfra(t, config);
  await t.rejects(createDemoAccount(infra.pg, config), {
    code: 'unavailable',
    message: /not reachable at http:\/\/127\.0\.0\.1:9 .*start it with npm start/,
  });
  t.equal((await infra.pg.query('SELECT count(*)::int AS n FROM accounts')).rows[0].n, 0);
});

t.test('console client registration is idempotent and adds base URLs', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  t.equal(await registerConsoleClient(infra.pg, 'http://127.0.0.1:8080'), null);
  t.equal(await registerConsoleClient(infra.pg, 'http://127.0.0.1:8080'), null);
  t.equal(await registerConsoleClient(infra.pg, 'https://billing.example.com/'), null);
  const { rows } = await infra.pg.query(
    'SELECT is_public, secret_hash, redirect_uris FROM oauth_clients WHERE id = $1',
    [CONSOLE_CLIENT_ID],
  );
  t.same(rows, [
    {
      is_public: true,
      secret_hash: null,
      redirect_uris: ['http://127.0.0.1:8080/console', 'https://billing.example.com/console'],
    },
  ]);
  t.match(
    await registerConsoleClient(infra.pg, 'http://meterline.internal:8080'),
    /http is only allowed for loopback hosts/,
    'an http base URL off loopback cannot be a redirect URI',
  );
});
