import t from 'tap';
import { isolatedConfig, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { appendedPaidEvents } from '../fixtures/webhook-events.js';
import { insertWebhook } from '../../services/domain/webhooks/store.js';
import { sealWebhookSecret, webhookSecretKey } from '../../services/domain/webhooks/secret.js';
import { checkRequest, startDispatcher } from './webhook-delivery-helpers.js';

// A burst (docs/webhooks.md "Webhook delivery"): N events committed at once to M webhooks, two dispatchers sharing
// the work. Every (event, webhook) arrives exactly once, signed with that webhook's secret, recorded as one
// succeeded first attempt; an unsubscribed webhook gets nothing.
t.test('a burst of N events to M webhooks arrives exactly once each, signed; two dispatchers share it', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const receiver = await startReceiver(t);
  const account = await createTestAccount(infra);
  const key = webhookSecretKey(config.SECRET_KEY);
  const HOOKS = 6;
  const EVENTS = 400;
  const hooks: { id: string; path: string; secret: string }[] = [];
  for (let i = 0; i < HOOKS; i++) {
    const path = `/burst/${i}`;
    // Both secret forms: whsec_<base64> (decoded key) and a caller's own text (its UTF-8 bytes).
    const secret = i % 2 ? `whsec_${Buffer.alloc(32, i).toString('base64')}` : `caller-chosen-secret-${i}-0123456789`;
    const w = await insertWebhook(infra.pg, account.accountId, {
      url: receiver.url(path),
      events: ['invoice.paid'],
      secretSealed: sealWebhookSecret(key, secret),
    });
    hooks.push({ id: w!.id, path, secret });
  }
  const other = await insertWebhook(infra.pg, account.accountId, {
    url: receiver.url('/burst/unsubscribed'),
    events: ['invoice.voided'],
    secretSealed: sealWebhookSecret(key, 'unsubscribed-secret-0123456789'),
  });

  await startDispatcher(t, config);
  await startDispatcher(t, config);
  const eventIds = await appendedPaidEvents(infra, account.accountId, EVENTS, (i) => ({
    invoiceId: `inv_burst_${i}`,
    amount: 10 + i,
  }));

  const burstPaths = new Set(hooks.map((h) => h.path));
  const received = () => receiver.requests.filter((r) => burstPaths.has(r.path));
  await waitUntil(() => received().length >= EVENTS * HOOKS, `${EVENTS * HOOKS} deliveries`, 120_000);
  await waitUntil(
    async () =>
      (
        await infra.pg.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) AND attempt = 1 AND status = 'pending'",
          [eventIds],
        )
      ).rows[0]!.n === 0,
    'every first attempt’s outcome recorded',
  );
  const failed = await infra.pg.query<{ error: string | null; response_status: number | null; n: number }>(
    `SELECT error, response_status, count(*)::int AS n FROM webhook_deliveries
      WHERE event_id = ANY($1) AND status <> 'succeeded' GROUP BY 1, 2`,
    [eventIds],
  );
  t.same(failed.rows, [], 'no attempt failed');

  const expected = new Set(eventIds);
  for (const h of hooks) {
    const got = receiver.at(h.path);
    const ids = got.map((r) => String(r.headers['webhook-id']));
    t.equal(ids.length, EVENTS, `${h.path}: ${EVENTS} requests, none twice`);
    t.equal(new Set(ids).size, EVENTS, `${h.path}: each event once`);
    t.ok(
      ids.every((id) => expected.has(id)),
      `${h.path}: only the burst's events`,
    );
    const bad = got.map((r) => checkRequest(r, h.secret)).filter((c) => c.problems.length > 0);
    t.same(
      bad.slice(0, 3).map((c) => c.problems),
      [],
      `${h.path}: every request's headers and both signatures verify with its own secret`,
    );
    t.ok(
      got.every((r) => {
        const p = JSON.parse(r.body.toString('utf8'));
        return p.type === 'invoice.paid' && p.data.invoice_id === `inv_burst_${eventIds.indexOf(p.id)}`;
      }),
      `${h.path}: each body is its own event's`,
    );
  }
  t.same(receiver.at('/burst/unsubscribed'), [], 'the webhook subscribed to another type got nothing');

  const rows = await infra.pg.query<{ webhook_id: string; attempts: number; succeeded: number; events: number }>(
    `SELECT webhook_id, count(*)::int AS attempts, count(*) FILTER (WHERE status = 'succeeded' AND attempt = 1)::int AS succeeded,
            count(DISTINCT event_id)::int AS events
       FROM webhook_deliveries WHERE event_id = ANY($1) GROUP BY webhook_id ORDER BY webhook_id`,
    [eventIds],
  );
  const byId = (a: { webhook_id: string }, b: { webhook_id: string }) =>
    a.webhook_id < b.webhook_id ? -1 : a.webhook_id > b.webhook_id ? 1 : 0;
  t.same(
    rows.rows.sort(byId),
    hooks.map((h) => ({ webhook_id: h.id, attempts: EVENTS, succeeded: EVENTS, events: EVENTS })).sort(byId),
    'one succeeded first attempt per (event, webhook), no retries, nothing for the unsubscribed webhook',
  );
  t.notOk(
    rows.rows.some((r) => r.webhook_id === other!.id),
    'no attempt row for the unsubscribed webhook',
  );
});
