import t from 'tap';
import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { startConsumer, waitForMeter } from './ingest-helpers.js';
import { UsageEventEmitter } from '../../services/roles/consumer/usage-events.js';
import { testInfra } from '../fixtures/env.js';
import { RETRY_DELAYS_MS } from '../../services/domain/webhooks/retry-schedule.js';
import {
  attemptsOf,
  checkRequest,
  emit,
  settledAttempt,
  startDispatcher,
  testClock,
} from './webhook-delivery-helpers.js';

const ALL_TYPES = ['invoice.created', 'invoice.paid', 'payment.failed', 'subscription.updated', 'meter.usage.recorded'];

t.test('webhook delivery', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const clock = testClock();
  const dispatcher = await startDispatcher(t, config, { delivery: { clock: clock.now } });
  const infra = dispatcher.infra;
  const receiver = await startReceiver(t);
  const operator = await createTestAccount(api.infra, { operator: true });
  const a = await createTestAccount(api.infra);
  const b = await createTestAccount(api.infra);
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const register = async (
    token: string,
    path: string,
    events: string[],
    secret = `whsec_test_${path.replace(/\W/g, '_')}_0123456789`,
  ) => {
    const res = await call(token, 'POST', '/v1/webhooks', { url: receiver.url(path), events, secret });
    if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.id as string, secret };
  };

  t.test(
    'every event type arrives with its data, the headers and signatures a receiver verifies; only subscribed types, only its own account',
    async (t) => {
      // meter.usage.recorded comes from the real pipeline: the consumer with its emitter hook.
      const consumerInfra = await testInfra(t, config, 'consumer');
      const usageEvents = new UsageEventEmitter(consumerInfra);
      await usageEvents.start();
      t.teardown(() => usageEvents.stop());
      await startConsumer(t, config, { afterInsert: usageEvents.afterInsert, maxWaitMs: 50 });

      const all = await register(a.tokens.write, '/a/all', ALL_TYPES);
      const paidOnly = await register(a.tokens.write, '/a/paid', ['invoice.paid']);
      const other = await register(b.tokens.write, '/b/all', ALL_TYPES);
      await waitUntil(
        () => usageEvents.isSubscribed(a.accountId),
        'the consumer to learn that A subscribed to meter.usage.recorded',
      );

      const product = await call(operator.tokens.admin, 'POST', '/v1/products', {
        name: 'Plan',
        price: 10,
        currency: 'usd',
      });
      const sub = await call(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: product.body.id }] });
      t.equal(sub.status, 201);
      const invoiceData = { invoice_id: 'inv_webhooktest0000000001', amount: 10, currency: 'USD' };
      const failedData = {
        ...invoiceData,
        payment_method_id: 'pm_webhooktest00000000001',
        failure_code: 'card_declined',
        attempt_count: 1,
      };
      const created = await emit(api.infra, a.accountId, 'invoice.created', invoiceData);
      const paid = await emit(api.infra, a.accountId, 'invoice.paid', invoiceData);
      const failed = await emit(api.infra, a.accountId, 'payment.failed', failedData);
      const meter = await call(a.tokens.write, 'POST', '/v1/meters', {
        name: 'calls',
        unit: 'calls',
        aggregation: 'sum',
      });
      await waitForMeter(
        { url: api.url, service: api.service, infra: api.infra },
        { ...meter.body, account_id: a.accountId, updated_at_ms: 0 },
        `Bearer ${a.tokens.write}`,
      );
      const usageTs = new Date(Date.now() - 60_000).toISOString();
      const usage = await call(a.tokens.write, 'POST', `/v1/meters/${meter.body.id}/usage`, {
        value: 2.5,
        timestamp: usageTs,
        id: 'usage-1',
      });
      t.equal(usage.status, 202);
      const bEvent = await emit(api.infra, b.accountId, 'invoice.paid', {
        ...invoiceData,
        invoice_id: 'inv_webhooktest0000000002',
      });

      await waitUntil(
        () => receiver.at('/a/all').length >= 5 && receiver.at('/b/all').length >= 1,
        'A’s five events and B’s one to arrive',
        30_000,
      );
      const byType = new Map<string, ReturnType<typeof checkRequest>>();
      for (const r of receiver.at('/a/all')) {
        const checked = checkRequest(r, all.secret);
        t.same(checked.problems, [], `${checked.payload.type}: headers and signatures verify`);
        byType.set(checked.payload.type, checked);
      }
      t.same([...byType.keys()].sort(), [...ALL_TYPES].sort(), 'one request per event type');
      // Every event's data names its customer (docs/design.md §9); A was made without an external id.
      const customer = { customer_id: a.customerId };
      t.same(byType.get('invoice.created')!.payload.data, { ...invoiceData, ...customer });
      t.equal(byType.get('invoice.created')!.payload.id, created);
      t.same(byType.get('invoice.paid')!.payload.data, { ...invoiceData, ...customer });
      t.equal(byType.get('invoice.paid')!.payload.id, paid);
      t.same(byType.get('payment.failed')!.payload.data, { ...failedData, ...customer });
      t.equal(byType.get('payment.failed')!.payload.id, failed);
      t.same(byType.get('subscription.updated')!.payload.data, {
        subscription_id: sub.body.id,
        status: 'active',
        items: [{ product_id: product.body.id, meter_id: null }],
        plan_id: null,
        plan_version: null,
        billing_threshold: null,
        coupon_id: null,
        cancel_at_period_end: false,
        collection_paused: false,
        cancel_at: null,
        canceled_at: null,
        ...customer,
      });
      t.same(byType.get('meter.usage.recorded')!.payload.data, {
        meter_id: meter.body.id,
        usage_id: 'usage-1',
        value: 2.5,
        timestamp: usageTs,
        ...customer,
      });
      for (const c of byType.values()) {
        t.same(
          Object.keys(c.payload).sort(),
          ['created_at', 'data', 'id', 'type'],
          'payload {id, type, data, created_at}',
        );
        t.match(c.payload.id, /^evt_[0-9A-Za-z]{22}$/);
      }

      t.same(
        receiver.at('/a/paid').map((r) => JSON.parse(r.body.toString()).id),
        [paid],
        'the invoice.paid-only webhook got invoice.paid only',
      );
      const bIds = receiver.at('/b/all').map((r) => JSON.parse(r.body.toString()).id);
      t.same(bIds, [bEvent], 'B’s webhook got B’s event only');
      t.equal(checkRequest(receiver.at('/b/all')[0]!, other.secret).problems.length, 0, 'signed with B’s secret');
      const recorded = await infra.pg.query<{ webhook_id: string; n: number }>(
        'SELECT webhook_id, count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) GROUP BY webhook_id ORDER BY n DESC',
        [[...[...byType.values()].map((c) => c.payload.id), bEvent]],
      );
      t.same(
        new Map(recorded.rows.map((r) => [r.webhook_id, r.n])),
        new Map([
          [all.id, 5],
          [other.id, 1],
          [paidOnly.id, 1],
        ]),
        'no delivery recorded to an unsubscribed or foreign webhook',
      );

      // The log, newest first, with duration_ms; the events API in the delivered payload's shape.
      await waitUntil(
        async () => (await attemptsOf(infra, all.id)).every((r) => r.status !== 'pending'),
        'the outcomes to be recorded',
      );
      const log = await call(a.tokens.read, 'GET', `/v1/webhooks/${all.id}/deliveries`);
      t.equal(log.status, 200);
      t.equal(log.body.pagination.total, 5);
      for (const d of log.body.data) {
        t.match(d, { attempt: 1, status: 'succeeded', response_status: 200, error: null, next_attempt_at: null });
        t.ok(Number.isInteger(d.duration_ms) && d.duration_ms >= 0, 'duration_ms recorded');
        t.match(d.id, /^whd_/);
      }
      const events = await call(a.tokens.read, 'GET', '/v1/events?per_page=100');
      t.equal(events.status, 200);
      t.equal(events.body.pagination.total, 5, 'A’s five events, not B’s');
      for (const e of events.body.data) t.same(e, byType.get(e.type)!.payload, `${e.type}: the event as delivered`);
      const onlyPaid = await call(a.tokens.read, 'GET', '/v1/events?type=invoice.paid');
      t.same(
        onlyPaid.body.data.map((e: { id: string }) => e.id),
        [paid],
      );
      const one = await call(a.tokens.read, 'GET', `/v1/events/${created}`);
      t.same(one.body, byType.get('invoice.created')!.payload);
      t.equal(
        (await call(b.tokens.read, 'GET', `/v1/events/${created}`)).status,
        404,
        'another account’s event is 404',
      );
      t.equal((await call(a.tokens.read, 'GET', '/v1/events?type=nope')).status, 422);
    },
  );

  t.test('500 then 200: retried 1 min later with the same X-Webhook-Id; the log shows both attempts', async (t) => {
    const hook = await register(a.tokens.write, '/flaky', ['invoice.paid']);
    receiver.on('/flaky', (n) => (n === 1 ? 500 : 200));
    const id = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_flaky',
      amount: 1,
      currency: 'USD',
    });
    const first = await settledAttempt(infra, hook.id, id, 1);
    t.match(first, { status: 'failed', response_status: 500, error: 'HTTP 500' });
    t.equal(
      first.next_attempt_at!.getTime() - first.attempted_at!.getTime(),
      60_000,
      'next attempt 1 min after the first',
    );
    const [, second] = await attemptsOf(infra, hook.id, id);
    t.match(second, { attempt: 2, status: 'pending' });
    t.equal(second!.next_attempt_at!.getTime(), first.next_attempt_at!.getTime());
    t.equal(receiver.at('/flaky').length, 1, 'not retried before it is due');
    clock.advance(60_000);
    const retried = await settledAttempt(infra, hook.id, id, 2);
    t.match(retried, { status: 'succeeded', response_status: 200, next_attempt_at: null });
    const got = receiver.at('/flaky');
    t.equal(got.length, 2);
    t.equal(got[0]!.headers['x-webhook-id'], id);
    t.equal(got[1]!.headers['x-webhook-id'], id, 'same X-Webhook-Id on the retry');
    t.same(got[1]!.body, got[0]!.body, 'same body bytes');
    t.same(checkRequest(got[1]!, hook.secret).problems, []);
    const log = await call(a.tokens.read, 'GET', `/v1/webhooks/${hook.id}/deliveries`);
    t.same(
      log.body.data.map((d: any) => [d.attempt, d.status, d.response_status, d.event_id]),
      [
        [2, 'succeeded', 200, id],
        [1, 'failed', 500, id],
      ],
      'both attempts, newest first',
    );
  });

  t.test(
    'a receiver that keeps failing is retried 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h, 24 h later, then the delivery is failed',
    async (t) => {
      const hook = await register(a.tokens.write, '/down', ['invoice.paid']);
      receiver.on('/down', 503);
      const id = await emit(api.infra, a.accountId, 'invoice.paid', {
        invoice_id: 'inv_down',
        amount: 1,
        currency: 'USD',
      });
      for (let attempt = 1; attempt <= 9; attempt++) {
        const row = await settledAttempt(infra, hook.id, id, attempt);
        t.equal(row.response_status, 503);
        const delay = RETRY_DELAYS_MS[attempt - 1];
        if (delay === undefined) {
          t.equal(row.next_attempt_at, null, 'no attempt after the ninth');
          t.equal(row.status, 'failed');
        } else {
          t.equal(
            row.next_attempt_at!.getTime() - row.attempted_at!.getTime(),
            delay,
            `attempt ${attempt + 1} due ${delay / 60_000} min later`,
          );
          clock.advance(delay);
        }
      }
      const rows = await attemptsOf(infra, hook.id, id);
      t.equal(rows.length, 9, 'nine attempts in all');
      t.ok(rows.every((r) => r.status === 'failed'));
      t.equal(receiver.at('/down').length, 9);
    },
  );

  t.test('301 is a failure and is not followed', async (t) => {
    const hook = await register(a.tokens.write, '/moved', ['invoice.paid']);
    receiver.on('/moved', () => ({ status: 301, headers: { location: receiver.url('/moved-target') } }));
    const id = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_moved',
      amount: 1,
      currency: 'USD',
    });
    const row = await settledAttempt(infra, hook.id, id, 1);
    t.match(row, { status: 'failed', response_status: 301, error: 'redirect (301) not followed' });
    t.ok(row.next_attempt_at, 'retried later like any failure');
    t.equal(receiver.at('/moved-target').length, 0, 'the redirect target was never called');
  });

  t.test('410 disables the webhook; nothing more is sent to it', async (t) => {
    const hook = await register(a.tokens.write, '/gone', ['invoice.paid']);
    const witness = await register(a.tokens.write, '/witness', ['invoice.paid']);
    receiver.on('/gone', 410);
    const id = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_gone',
      amount: 1,
      currency: 'USD',
    });
    const row = await settledAttempt(infra, hook.id, id, 1);
    t.match(row, { status: 'failed', response_status: 410, next_attempt_at: null });
    t.equal((await call(a.tokens.read, 'GET', `/v1/webhooks/${hook.id}`)).body.status, 'disabled');
    const later = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_gone2',
      amount: 1,
      currency: 'USD',
    });
    await settledAttempt(infra, witness.id, later, 1);
    t.same(await attemptsOf(infra, hook.id, later), [], 'no delivery of a later event to the disabled webhook');
    t.equal(receiver.at('/gone').length, 1);
    const retry = await call(a.tokens.write, 'POST', `/v1/webhooks/${hook.id}/deliveries/${row.id}/retry`);
    t.equal(retry.status, 409, 'a manual retry to a disabled webhook is refused');
    t.equal(retry.body.code, 'webhook_disabled');
  });

  t.test('manual retry: a new attempt, sent now, same event id; another account gets 404', async (t) => {
    const hook = await register(a.tokens.write, '/manual', ['invoice.paid']);
    const id = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_manual',
      amount: 1,
      currency: 'USD',
    });
    const first = await settledAttempt(infra, hook.id, id, 1);
    t.equal(first.status, 'succeeded');
    t.equal((await call(b.tokens.write, 'POST', `/v1/webhooks/${hook.id}/deliveries/${first.id}/retry`)).status, 404);
    const res = await call(a.tokens.write, 'POST', `/v1/webhooks/${hook.id}/deliveries/${first.id}/retry`);
    t.equal(res.status, 202);
    t.match(res.body, { attempt: 2, status: 'pending', event_id: id, event_type: 'invoice.paid' });
    const second = await settledAttempt(infra, hook.id, id, 2);
    t.equal(second.status, 'succeeded');
    t.same(
      receiver.at('/manual').map((r) => r.headers['x-webhook-id']),
      [id, id],
    );
  });

  t.test('rotate-secret: the new secret is returned once; for 24 h both secrets sign webhook-signature', async (t) => {
    const hook = await register(a.tokens.write, '/rotated', ['invoice.paid']);
    const rotated = await call(a.tokens.write, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`);
    t.equal(rotated.status, 200);
    t.match(rotated.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    t.equal((await call(a.tokens.read, 'GET', `/v1/webhooks/${hook.id}`)).body.secret, undefined, 'never shown again');
    t.equal((await call(b.tokens.write, 'POST', `/v1/webhooks/${hook.id}/rotate-secret`)).status, 404);
    const newSecret = rotated.body.secret as string;
    const id = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_rot',
      amount: 1,
      currency: 'USD',
    });
    await settledAttempt(infra, hook.id, id, 1);
    const r = receiver.at('/rotated')[0]!;
    t.equal(String(r.headers['webhook-signature']).split(' ').length, 2, 'two signatures during the overlap');
    t.same(checkRequest(r, newSecret).problems, [], 'verifies with the new secret (X-Webhook-Signature uses it)');
    t.doesNotThrow(
      () => new StandardWebhook(newSecret).verify(r.body.toString(), r.headers as Record<string, string>),
      'the generated secret, as given, verifies with the standardwebhooks library',
    );
    t.doesNotThrow(
      () =>
        new StandardWebhook(Buffer.from(hook.secret).toString('base64')).verify(
          r.body.toString(),
          r.headers as Record<string, string>,
        ),
      'a receiver still on the old secret verifies too',
    );
    t.not(r.headers['x-webhook-signature'], createHmac('sha256', hook.secret).update(r.body).digest('hex'));

    // 24 h later: the expiry the rotation set (now + 24 h) has passed.
    await infra.pg.query("UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1", [
      hook.id,
    ]);
    const after = await emit(api.infra, a.accountId, 'invoice.paid', {
      invoice_id: 'inv_rot2',
      amount: 1,
      currency: 'USD',
    });
    await settledAttempt(infra, hook.id, after, 1);
    const r2 = receiver.at('/rotated')[1]!;
    t.equal(String(r2.headers['webhook-signature']).split(' ').length, 1, 'after 24 h only the new secret signs');
    t.same(checkRequest(r2, newSecret).problems, []);
  });

  t.test('a hanging receiver times out at 10 s and does not hold up other receivers', async (t) => {
    const hanging = await register(a.tokens.write, '/hang', ['payment.failed']);
    const fast = await register(a.tokens.write, '/fast', ['payment.failed']);
    receiver.on('/hang', 'hang');
    const ids: string[] = [];
    for (let i = 0; i < 40; i++)
      ids.push(
        await emit(api.infra, a.accountId, 'payment.failed', {
          invoice_id: `inv_h${i}`,
          amount: 1,
          currency: 'USD',
          payment_method_id: null,
          failure_code: 'no_payment_method',
          attempt_count: 1,
        }),
      );
    await waitUntil(() => receiver.at('/fast').length === 40, 'every event at the fast receiver while the other hangs');
    const hangingNow = receiver.at('/hang').length;
    t.ok(
      hangingNow > 0 && hangingNow < 40,
      `the hanging webhook holds at most its concurrency limit (${hangingNow} of 40 in flight)`,
    );
    const row = await settledAttempt(
      infra,
      hanging.id,
      ids.find((id) => receiver.at('/hang').some((r) => r.headers['x-webhook-id'] === id))!,
      1,
      20_000,
    );
    t.match(row, { status: 'failed', response_status: null, error: 'timeout after 10000 ms' });
    t.ok(row.duration_ms! >= 10_000, `gave up after ${row.duration_ms} ms`);
    t.ok(row.next_attempt_at, 'a timeout is retried later');
    t.same(
      (await attemptsOf(infra, fast.id)).filter((r) => r.status !== 'succeeded'),
      [],
      'every fast delivery succeeded',
    );
    await call(a.tokens.write, 'PATCH', `/v1/webhooks/${hanging.id}`, { status: 'disabled' });
  });
});
