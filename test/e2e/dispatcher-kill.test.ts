import t from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { appendedPaidEvents } from '../fixtures/webhook-events.js';
import { spawnDispatcher } from '../fixtures/dispatcher-process.js';
import { insertWebhook } from '../../services/domain/webhooks/store.js';
import { sealWebhookSecret, webhookSecretKey } from '../../services/domain/webhooks/secret.js';

// kill -9 of the dispatcher in the middle of a burst: after a restart every event reaches every webhook;
// a duplicate is possible only for a request the killed process had in flight.
t.test('dispatcher killed with SIGKILL mid-burst; after a restart every event is delivered', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const receiver = await startReceiver(t);
  const account = await createTestAccount(infra);
  const key = webhookSecretKey(config.SECRET_KEY);
  // The lease must outlast the 10 s request timeout (a shorter one would hand a slow request to a second sender).
  const LEASE_MS = 12_000;
  const HOOKS = 4;
  const EVENTS = 1_500;
  const hooks: string[] = [];
  for (let i = 0; i < HOOKS; i++) {
    const w = await insertWebhook(infra.pg, account.accountId, {
      url: receiver.url(`/h${i}`),
      events: ['invoice.paid'],
      secretSealed: sealWebhookSecret(key, `whsec_kill_test_secret_${i}`),
    });
    hooks.push(w!.id);
  }
  const eventIds = await appendedPaidEvents(infra, account.accountId, EVENTS, (i) => ({
    invoiceId: `inv_${i}`,
    amount: i,
  }));

  const first = spawnDispatcher(t, config, LEASE_MS);
  await first.ready;
  await waitUntil(() => receiver.requests.length >= (EVENTS * HOOKS) / 5, 'a fifth of the burst to arrive', 60_000);
  first.child.kill('SIGKILL');
  await first.exited;
  const atKill = receiver.requests.length;
  t.ok(atKill < EVENTS * HOOKS, `killed mid-burst (${atKill} of ${EVENTS * HOOKS} requests received)`);
  const leased = (
    await infra.pg.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND lease_until > now()",
    )
  ).rows[0]!.n;
  t.comment(`${leased} attempts were leased to the killed process`);

  const second = spawnDispatcher(t, config, LEASE_MS);
  await second.ready;
  const key2 = (path: string, id: string) => `${path} ${id}`;
  await waitUntil(
    () => {
      const seen = new Set(receiver.requests.map((r) => key2(r.path, r.headers['x-webhook-id'] as string)));
      return seen.size === EVENTS * HOOKS;
    },
    'every event at every webhook',
    120_000,
  );
  await waitUntil(
    async () => (await infra.pg.query("SELECT 1 FROM webhook_deliveries WHERE status <> 'succeeded'")).rowCount === 0,
    'every attempt recorded as succeeded',
    60_000,
  );

  const perPair = new Map<string, number>();
  for (const r of receiver.requests)
    perPair.set(
      key2(r.path, r.headers['x-webhook-id'] as string),
      (perPair.get(key2(r.path, r.headers['x-webhook-id'] as string)) ?? 0) + 1,
    );
  for (let i = 0; i < HOOKS; i++) {
    const ids = new Set(receiver.at(`/h${i}`).map((r) => r.headers['x-webhook-id']));
    t.equal(ids.size, EVENTS, `webhook ${i}: every event id arrived`);
    t.ok(
      eventIds.every((id) => ids.has(id)),
      `webhook ${i}: exactly the burst's events`,
    );
  }
  const duplicated = [...perPair.values()].filter((n) => n > 1).length;
  t.ok(
    [...perPair.values()].every((n) => n <= 2),
    'nothing arrived more than twice',
  );
  t.ok(
    duplicated <= 512,
    `duplicates (${duplicated}) only for requests the killed process could have had in flight (≤ its global limit, 512)`,
  );
  const rows = (await infra.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0]!.n;
  t.equal(rows, EVENTS * HOOKS, 'one attempt row per event and webhook: the lost ones were sent again, not duplicated');
  second.child.kill('SIGTERM');
  await second.exited;
});
