import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { jetstreamManager } from '@nats-io/jetstream';
import { newId } from '../../shared/ids.js';
import {
  billingAddressBody,
  callJson,
  cardBody,
  usageRecord,
  waitForIngressMeter,
  webhookBody,
} from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { testClockIsolation } from './isolation-test-clocks.js';

/**
 * Tenant isolation (docs/design.md §6): account B gets 404 for every one of account A's resources, by any method,
 * and never sees them in lists; nothing B does changes them. Products are the exception by design: the
 * catalog is shared by the deployment, so B reads A's operator's products.
 */
t.test('isolation between accounts', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const a = await createTestAccount(api.infra);
  const b = await createTestAccount(api.infra);

  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  /** Set-up calls must succeed, or every assertion below would be about the wrong thing. */
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await call(token, method, path, body);
    if (r.status >= 300) throw new Error(`set-up ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const flat = (await call(operator.tokens.admin, 'POST', '/v1/products', { name: 'Flat', price: 10, currency: 'USD' }))
    .body.id;
  const metered = (
    await call(operator.tokens.admin, 'POST', '/v1/products', {
      name: 'Metered',
      price: 0.01,
      currency: 'USD',
      pricing: 'metered',
    })
  ).body.id;
  const aMeter = (await call(a.tokens.write, 'POST', '/v1/meters', { name: 'A meter', unit: 'u', aggregation: 'sum' }))
    .body;
  const aSub = (
    await call(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: flat }, { product_id: metered, meter_id: aMeter.id }],
    })
  ).body;
  const bMeter = (await call(b.tokens.write, 'POST', '/v1/meters', { name: 'B meter', unit: 'u', aggregation: 'sum' }))
    .body;
  const bSub = (await call(b.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: flat }] })).body;
  const plan = (
    await made(operator.tokens.admin, 'POST', '/v1/plans', {
      name: 'Plan',
      currency: 'USD',
      interval: 'month',
      items: [{ product_id: flat }],
    })
  ).id;

  // A: two cards (the first is the default, so B's "make default" on the second would show), an address,
  // a webhook with one recorded delivery attempt, and usage recorded on its meter.
  const aPm = await made(a.tokens.write, 'POST', '/v1/billing/payment-methods', cardBody('4242424242424242'));
  const aPm2 = await made(a.tokens.write, 'POST', '/v1/billing/payment-methods', cardBody('5555555555554444'));
  const aBilling = await made(a.tokens.write, 'PATCH', '/v1/billing', billingAddressBody('1 A Street'));
  const aWh = await made(a.tokens.write, 'POST', '/v1/webhooks', webhookBody('https://a.example.com/hook'));
  const aDeliveryId = newId('whd');
  // What the dispatcher records for an attempt; there is no dispatcher in this process.
  await api.infra.pg.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_id, event_type, attempt, status, response_status, error)
     VALUES ($1, $2, $3, $4, 'invoice.created', 1, 'failed', 500, 'HTTP 500')`,
    [aDeliveryId, aWh.id, a.accountId, newId('evt')],
  );
  const aEventId = (
    await api.infra.pg.query("SELECT id FROM outbox_events WHERE account_id = $1 AND data->>'subscription_id' = $2", [
      a.accountId,
      aSub.id,
    ])
  ).rows[0]!.id as string;
  const sealedSecret = async (id: string) =>
    (await api.infra.pg.query('SELECT secret_sealed FROM webhooks WHERE id = $1', [id])).rows[0]
      ?.secret_sealed as string;
  const aSecretSealed = await sealedSecret(aWh.id);
  // The ingress knows meters from an asynchronous registry: without this wait B's usage POSTs would get 404
  // merely because the meter isn't known yet, proving nothing about isolation.
  await waitForIngressMeter(api.url, a.tokens.write, aMeter.id);
  await waitForIngressMeter(api.url, b.tokens.write, bMeter.id);
  await made(a.tokens.write, 'POST', `/v1/meters/${aMeter.id}/usage`, { ...usageRecord(7), id: 'a-own-record' });
  // B: its own card and webhook, no address.
  const bPm = await made(b.tokens.write, 'POST', '/v1/billing/payment-methods', cardBody('378282246310005', '1234'));
  const bWh = await made(b.tokens.write, 'POST', '/v1/webhooks', webhookBody('https://b.example.com/hook'));

  // An invoice each, as the billing run writes them (no endpoint creates invoices).
  const invoiceOf = (who: { accountId: string; customerId: string }, subscriptionId: string) =>
    insertInvoice(api.infra.pg, {
      accountId: who.accountId,
      customerId: who.customerId,
      subscriptionId,
      amount: '10',
      periodStart: '2026-01-01',
      periodEnd: '2026-01-31',
      lines: [{ product_id: flat, description: 'Flat', quantity: '1', unit_price: '10', amount: '10' }],
    });
  const aInvoice = await invoiceOf(a, aSub.id);
  const bInvoice = await invoiceOf(b, bSub.id);
  const aCredit = await made(operator.tokens.admin, 'POST', '/v1/billing/credits', {
    account_id: a.accountId,
    amount: 25,
    currency: 'USD',
    description: 'A credit',
  });
  const aAlert = await made(a.tokens.write, 'POST', '/v1/alerts', { meter_id: aMeter.id, thresholds: [10] });
  const aCreditNote = await made(operator.tokens.admin, 'POST', `/v1/billing/invoices/${aInvoice}/credit-notes`, {
    amount: 2,
    reason: 'A note',
  });

  const jsm = await jetstreamManager(api.infra.nats);
  /** Records the USAGE stream holds for an account (each accepted record is one message on its subject). */
  const storedRecords = async (accountId: string) => {
    const subject = api.infra.natsNames.usageSubject(accountId);
    const info = await jsm.streams.info(api.infra.natsNames.usageStream, { subjects_filter: subject });
    return info.state.subjects?.[subject] ?? 0;
  };

  const matrix: [string, string, unknown?][] = [
    ['GET', `/v1/meters/${aMeter.id}`],
    ['PATCH', `/v1/meters/${aMeter.id}`, { status: 'inactive' }],
    ['PATCH', `/v1/meters/${aMeter.id}`, { name: 'taken over' }],
    ['GET', `/v1/subscriptions/${aSub.id}`],
    ['PATCH', `/v1/subscriptions/${aSub.id}`, { status: 'canceled' }],
    ['PATCH', `/v1/subscriptions/${aSub.id}`, { items: [{ product_id: flat }] }],
    ['GET', `/v1/meters/${aMeter.id}/usage`],
    ['POST', `/v1/meters/${aMeter.id}/usage`, usageRecord(1000)],
    ['POST', `/v1/meters/${aMeter.id}/usage`, [usageRecord(1000), usageRecord(1)]],
    ['POST', `/v1/meters/${aMeter.id}/usage/corrections`, { cancel: ['a-own-record'] }],
    ['GET', `/v1/meters/${aMeter.id}/usage/corrections`],
    ['GET', `/v1/billing/payment-methods/${aPm.id}`],
    ['GET', `/v1/billing/payment-methods/${aPm2.id}`],
    ['PATCH', `/v1/billing/payment-methods/${aPm2.id}/default`],
    ['GET', `/v1/webhooks/${aWh.id}`],
    ['PATCH', `/v1/webhooks/${aWh.id}`, { status: 'disabled' }],
    [
      'PATCH',
      `/v1/webhooks/${aWh.id}`,
      { url: 'https://b.example.com/stolen', events: ['invoice.paid'], secret: 'b-chosen-secret-0123456789' },
    ],
    ['GET', `/v1/webhooks/${aWh.id}/deliveries`],
    ['POST', `/v1/webhooks/${aWh.id}/deliveries/${aDeliveryId}/retry`],
    ['POST', `/v1/webhooks/${bWh.id}/deliveries/${aDeliveryId}/retry`],
    ['POST', `/v1/webhooks/${aWh.id}/rotate-secret`],
    ['GET', `/v1/events/${aEventId}`],
    ['DELETE', `/v1/webhooks/${aWh.id}`],
    ['GET', `/v1/billing/invoices/${aInvoice}`],
    ['GET', `/v1/billing/invoices/${aInvoice}/download`],
    ['GET', `/v1/billing/invoices/upcoming?subscription_id=${aSub.id}`],
    ['POST', `/v1/billing/invoices/${aInvoice}/pay`],
    ['GET', `/v1/billing/credits/${aCredit.id}`],
    ['GET', `/v1/billing/credit-notes/${aCreditNote.id}`],
    ['GET', `/v1/billing/credit-notes/${aCreditNote.id}/download`],
    ['GET', `/v1/alerts/${aAlert.id}`],
    ['DELETE', `/v1/alerts/${aAlert.id}`],
  ];
  for (const [method, path, body] of matrix) {
    t.test(`B: ${method} ${path.replace(/_[0-9A-Za-z]{22}/, '_…')} → 404`, async (t) => {
      for (const scope of ['read', 'write'] as const) {
        const res = await call(b.tokens[scope], method, path, body);
        if (method !== 'GET' && scope === 'read') {
          t.equal(res.status, 403, 'a read token is refused before any lookup');
          continue;
        }
        t.equal(res.status, 404, `${scope} token`);
        t.equal(res.body.code, 'not_found');
        const text = JSON.stringify(res.body);
        t.notOk(text.includes(a.accountId) || text.includes(a.customerId), 'the answer names nothing of A');
      }
    });
  }

  // Operator mode (docs/operator-mode.md): only an admin acts for a customer; B may name only itself.
  const actingForA: [string, string, unknown?][] = [
    ['GET', `/v1/customers/${a.customerId}`],
    ['PATCH', `/v1/customers/${a.customerId}`, { name: 'taken over' }],
    ['GET', `/v1/customers/${a.customerId}/users`],
    ['POST', `/v1/customers/${a.customerId}/users`, { email: 'intruder@b.example' }],
    ['GET', `/v1/subscriptions?customer_id=${a.customerId}`],
    ['POST', '/v1/subscriptions', { customer_id: a.customerId, items: [{ product_id: flat }] }],
    ['POST', '/v1/subscriptions', { customer_id: a.customerId, plan_id: plan }],
    ['GET', `/v1/billing/invoices?customer_id=${a.customerId}`],
    ['GET', `/v1/billing/credits?customer_id=${a.customerId}`],
    ['GET', `/v1/billing/credit-notes?customer_id=${a.customerId}`],
    ['GET', `/v1/billing/payment-methods?customer_id=${a.customerId}`],
    ['GET', `/v1/billing/invoices/upcoming?customer_id=${a.customerId}`],
    ['GET', `/v1/alerts?customer_id=${a.customerId}`],
    ['POST', '/v1/alerts', { customer_id: a.customerId, meter_id: aMeter.id, thresholds: [1] }],
    ['POST', '/v1/billing/payment-method-links', { customer_id: a.customerId }],
  ];
  for (const [method, path, body] of actingForA) {
    t.test(`B acting for A: ${method} ${path.replace(/_[0-9A-Za-z]{22}/, '_…')} → 403`, async (t) => {
      for (const scope of ['read', 'write'] as const) {
        const res = await call(b.tokens[scope], method, path, body);
        t.equal(res.status, 403, `${scope} token`);
        t.equal(res.body.code, 'insufficient_scope');
        const text = JSON.stringify(res.body);
        t.notOk(text.includes(a.accountId) || text.includes(aSub.id), 'the answer names nothing of A');
      }
    });
  }
  t.test('acting for a customer: the operator for any, B for itself only', async (t) => {
    const ids = async (token: string, path: string) =>
      (await call(token, 'GET', path)).body.data.map((x: { id: string }) => x.id);
    t.same(await ids(operator.tokens.admin, `/v1/subscriptions?customer_id=${a.customerId}`), [aSub.id]);
    t.same(await ids(operator.tokens.admin, `/v1/billing/invoices?customer_id=${a.customerId}`), [aInvoice]);
    t.same(await ids(operator.tokens.admin, `/v1/billing/credits?customer_id=${a.customerId}`), [aCredit.id]);
    t.same(await ids(b.tokens.read, `/v1/subscriptions?customer_id=${b.customerId}`), [bSub.id], 'B naming itself');
    t.same(await ids(b.tokens.read, `/v1/billing/invoices?customer_id=${b.customerId}`), [bInvoice]);
    const got = await call(operator.tokens.admin, 'GET', `/v1/customers/${a.customerId}`);
    t.not(got.body.name, 'taken over', 'nothing B sent changed A');
    t.equal((await call(operator.tokens.admin, 'GET', `/v1/customers/${a.customerId}/users`)).body.pagination.total, 1);
  });

  // The actor's scope (docs/operator-mode.md): by id, the operator acts on A's resources exactly as A does.
  t.test('the operator reads every one of A’s resources by id exactly as A does', async (t) => {
    const paths = [
      `/v1/meters/${aMeter.id}`,
      `/v1/meters/${aMeter.id}/usage?window=none`,
      `/v1/subscriptions/${aSub.id}`,
      `/v1/billing/payment-methods/${aPm.id}`,
      `/v1/billing/payment-methods?customer_id=${a.customerId}`,
      `/v1/billing/invoices/${aInvoice}`,
      `/v1/billing/credits/${aCredit.id}`,
      `/v1/billing/credit-notes/${aCreditNote.id}`,
      `/v1/billing/credit-notes?invoice_id=${aInvoice}`,
      `/v1/billing/credit-notes?customer_id=${a.customerId}`,
      `/v1/alerts/${aAlert.id}`,
    ];
    for (const path of paths) {
      const own = path.replace(/[?&]customer_id=[^&]*/, '');
      const [mine, operators] = await Promise.all([
        call(a.tokens.read, 'GET', own),
        call(operator.tokens.admin, 'GET', path),
      ]);
      t.equal(mine.status, 200, `A: GET ${own}`);
      t.equal(operators.status, 200, `operator: GET ${path}`);
      t.same(operators.body, mine.body, `the operator reads what A reads: ${path}`);
    }
    const upcoming = (token: string, q: string) =>
      call(token, 'GET', `/v1/billing/invoices/upcoming?${q}`).then((r) => ({ ...r.body, created_at: undefined }));
    const aUpcoming = await upcoming(a.tokens.read, `subscription_id=${aSub.id}`);
    t.equal(aUpcoming.subscription_id, aSub.id);
    t.same(await upcoming(operator.tokens.admin, `subscription_id=${aSub.id}`), aUpcoming, 'upcoming by subscription');
    t.same(await upcoming(operator.tokens.admin, `customer_id=${a.customerId}`), aUpcoming, 'upcoming by customer');
    t.same(await upcoming(a.tokens.read, `customer_id=${a.customerId}`), aUpcoming, 'A naming itself');
    const notA = await call(
      operator.tokens.admin,
      'GET',
      `/v1/billing/invoices/upcoming?customer_id=${a.customerId}&subscription_id=${bSub.id}`,
    );
    t.equal(notA.status, 404, 'a subscription named with a customer must be that customer’s');
    for (const [path, id] of [
      [`/v1/billing/invoices/${aInvoice}/download`, aInvoice],
      [`/v1/billing/credit-notes/${aCreditNote.id}/download`, aCreditNote.id],
    ] as const) {
      const pdf = await call(operator.tokens.admin, 'GET', path);
      t.equal(pdf.status, 200, `operator: GET ${path}`);
      t.match(pdf.headers.get('content-disposition'), `filename="${id}.pdf"`);
      t.ok(String(pdf.body).startsWith('%PDF-'), 'a PDF');
    }
  });

  t.test('B cannot watch A’s meter, nor see A’s alert', async (t) => {
    const res = await call(b.tokens.write, 'POST', '/v1/alerts', { meter_id: aMeter.id, thresholds: [1] });
    t.equal(res.status, 422);
    t.same(res.body.errors, [{ field: 'meter_id', message: `no meter ${aMeter.id} of the watched customer` }]);
    t.same((await call(b.tokens.read, 'GET', '/v1/alerts')).body.data, [], 'B lists no alert of A');
    t.equal((await call(a.tokens.read, 'GET', `/v1/alerts/${aAlert.id}`)).status, 200, 'A’s alert is still there');
  });

  t.test('B cannot use A’s meter in a subscription', async (t) => {
    const res = await call(b.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: metered, meter_id: aMeter.id }],
    });
    t.equal(res.status, 422);
    t.same(res.body.errors, [{ field: 'items[0].meter_id', message: 'no such meter' }]);
    const patch = await call(b.tokens.write, 'PATCH', `/v1/subscriptions/${bSub.id}`, {
      items: [{ product_id: metered, meter_id: aMeter.id }],
    });
    t.equal(patch.status, 422);
  });

  t.test(
    'B’s usage batch naming A’s meter: that record is rejected as not found, nothing of it reaches the stream',
    async (t) => {
      const before = { a: await storedRecords(a.accountId), b: await storedRecords(b.accountId) };
      t.equal(before.a, 1, 'A’s own record is in the stream');
      // A batch with no valid record is a 422; A's meter must read exactly like a meter that never existed.
      const alone = await call(b.tokens.write, 'POST', '/v1/usage', [{ meter_id: aMeter.id, ...usageRecord(1000) }]);
      const missing = await call(b.tokens.write, 'POST', '/v1/usage', [
        { meter_id: newId('mtr'), ...usageRecord(1000) },
      ]);
      t.equal(alone.status, 422);
      t.equal(alone.body.code, 'validation_failed');
      t.same(alone.body.errors, [{ field: '[0].meter_id', message: 'does not exist' }]);
      t.same(alone.body.errors, missing.body.errors, 'indistinguishable from an unknown meter id');
      const mixed = await call(b.tokens.write, 'POST', '/v1/usage', [
        { meter_id: bMeter.id, ...usageRecord(2) },
        { meter_id: aMeter.id, ...usageRecord(1000) },
      ]);
      t.equal(mixed.status, 202);
      t.match(mixed.body, {
        accepted: 1,
        rejected: 1,
        results: [
          { index: 0, status: 'accepted' },
          { index: 1, status: 'rejected', error: { code: 'not_found', detail: `Meter ${aMeter.id} does not exist.` } },
        ],
      });
      t.same(
        { a: await storedRecords(a.accountId), b: await storedRecords(b.accountId) },
        { a: before.a, b: before.b + 1 },
        'A’s subject gained nothing (also from the 404 matrix); B’s gained only its own record',
      );
    },
  );

  t.test('lists never leak', async (t) => {
    const bMeters = await call(b.tokens.read, 'GET', '/v1/meters?per_page=100');
    t.same(
      bMeters.body.data.map((m: { id: string }) => m.id),
      [bMeter.id],
    );
    t.equal(bMeters.body.pagination.total, 1);
    for (const status of ['active', 'inactive']) {
      const r = await call(b.tokens.read, 'GET', `/v1/meters?status=${status}`);
      t.notOk(
        r.body.data.some((m: { id: string }) => m.id === aMeter.id),
        `status=${status}`,
      );
    }
    const bSubs = await call(b.tokens.read, 'GET', '/v1/subscriptions?per_page=100');
    t.same(
      bSubs.body.data.map((s: { id: string }) => s.id),
      [bSub.id],
    );
    t.equal(bSubs.body.pagination.total, 1);
    const aMeters = await call(a.tokens.read, 'GET', '/v1/meters');
    t.same(
      aMeters.body.data.map((m: { id: string }) => m.id),
      [aMeter.id],
    );
    const aSubs = await call(a.tokens.read, 'GET', '/v1/subscriptions');
    t.same(
      aSubs.body.data.map((s: { id: string }) => s.id),
      [aSub.id],
    );

    const bPms = await call(b.tokens.read, 'GET', '/v1/billing/payment-methods?per_page=100');
    t.same(
      bPms.body.data.map((p: { id: string }) => p.id),
      [bPm.id],
    );
    t.equal(bPms.body.pagination.total, 1);
    const bWhs = await call(b.tokens.read, 'GET', '/v1/webhooks?per_page=100');
    t.same(
      bWhs.body.data.map((w: { id: string }) => w.id),
      [bWh.id],
    );
    t.equal(bWhs.body.pagination.total, 1);
    t.same(
      (await call(b.tokens.read, 'GET', `/v1/webhooks/${bWh.id}/deliveries`)).body.data,
      [],
      'B’s webhook has no deliveries: A’s attempt is not listed',
    );
    const bEvents = await call(b.tokens.read, 'GET', '/v1/events?per_page=100');
    t.same(
      bEvents.body.data.map((e: { data: { subscription_id?: string } }) => e.data.subscription_id),
      [bSub.id],
      'B’s events: its own subscription’s only',
    );
    const bInvoices = await call(b.tokens.read, 'GET', '/v1/billing/invoices?per_page=100');
    t.same(
      bInvoices.body.data.map((i: { id: string }) => i.id),
      [bInvoice],
    );
    t.equal(bInvoices.body.pagination.total, 1);
    for (const status of ['open', 'paid', 'uncollectible', 'void']) {
      const r = await call(b.tokens.read, 'GET', `/v1/billing/invoices?status=${status}`);
      t.notOk(
        r.body.data.some((i: { id: string }) => i.id === aInvoice),
        `invoices status=${status}`,
      );
    }
    const bCredits = await call(b.tokens.read, 'GET', '/v1/billing/credits');
    t.same(
      { data: bCredits.body.data, balance: bCredits.body.balance },
      { data: [], balance: [] },
      'A’s credit is not B’s',
    );
    t.same((await call(a.tokens.read, 'GET', '/v1/billing/credits')).body.balance, [{ currency: 'USD', amount: 25 }]);
    const bNotes = await call(b.tokens.read, 'GET', '/v1/billing/credit-notes?per_page=100');
    t.same(
      { data: bNotes.body.data, total: bNotes.body.pagination.total },
      { data: [], total: 0 },
      'A’s credit note is not listed for B',
    );
    t.same(
      (await call(b.tokens.read, 'GET', `/v1/billing/credit-notes?invoice_id=${aInvoice}`)).body.data,
      [],
      'not even by A’s invoice id',
    );
    t.same(
      (await call(a.tokens.read, 'GET', '/v1/billing/credit-notes')).body.data.map((n: { id: string }) => n.id),
      [aCreditNote.id],
    );
    const aInvoices = await call(a.tokens.read, 'GET', '/v1/billing/invoices');
    t.same(
      aInvoices.body.data.map((i: { id: string }) => i.id),
      [aInvoice],
    );
    const aPms = await call(a.tokens.read, 'GET', '/v1/billing/payment-methods');
    t.same(
      aPms.body.data.map((p: { id: string }) => p.id),
      [aPm2.id, aPm.id],
    );
    const aWhs = await call(a.tokens.read, 'GET', '/v1/webhooks');
    t.same(
      aWhs.body.data.map((w: { id: string }) => w.id),
      [aWh.id],
    );
  });

  t.test('GET /v1/billing: B sees its own customer id, card and (absent) address, nothing of A', async (t) => {
    const res = await call(b.tokens.read, 'GET', '/v1/billing');
    t.equal(res.status, 200);
    t.same(res.body, {
      customer_id: b.customerId,
      payment_method: { id: bPm.id, type: 'card', last4: '0005', brand: 'amex' },
      billing_address: null,
    });
    const text = JSON.stringify(res.body);
    for (const leak of [a.customerId, aPm.id, aPm2.id, '4242', '4444', '1 A Street'])
      t.notOk(text.includes(leak), `no ${leak}`);
    const ofA = await call(a.tokens.read, 'GET', '/v1/billing');
    t.same(ofA.body, aBilling);
    t.same(ofA.body, {
      customer_id: a.customerId,
      payment_method: { id: aPm.id, type: 'card', last4: '4242', brand: 'visa' },
      billing_address: billingAddressBody('1 A Street').billing_address,
    });
  });

  t.test('nothing B tried changed A’s resources', async (t) => {
    const m = await call(a.tokens.read, 'GET', `/v1/meters/${aMeter.id}`);
    t.same(m.body, aMeter);
    const s = await call(a.tokens.read, 'GET', `/v1/subscriptions/${aSub.id}`);
    t.same(s.body, aSub);
    const events = await api.infra.pg.query(
      "SELECT account_id FROM outbox_events WHERE data->>'subscription_id' = $1",
      [aSub.id],
    );
    t.same(events.rows, [{ account_id: a.accountId }], 'only A’s creation event');
    t.same(
      (await call(a.tokens.read, 'GET', `/v1/billing/payment-methods/${aPm.id}`)).body,
      aPm,
      'A’s first card is still the default',
    );
    t.same(
      (await call(a.tokens.read, 'GET', `/v1/billing/payment-methods/${aPm2.id}`)).body,
      aPm2,
      'A’s second card is still not',
    );
    t.same(
      (await call(a.tokens.read, 'GET', `/v1/webhooks/${aWh.id}`)).body,
      aWh,
      'A’s webhook: same url, events, status, updated_at',
    );
    t.equal(await sealedSecret(aWh.id), aSecretSealed, 'A’s webhook secret was not rotated');
    const deliveries = await call(a.tokens.read, 'GET', `/v1/webhooks/${aWh.id}/deliveries`);
    t.same(
      deliveries.body.data.map((d: { id: string }) => d.id),
      [aDeliveryId],
      'A’s delivery history survived B’s DELETE',
    );
    const usage = await call(a.tokens.read, 'GET', `/v1/meters/${aMeter.id}/usage`);
    t.equal(usage.status, 200);
    t.equal(usage.body.meter_id, aMeter.id);
    t.equal(
      (await call(a.tokens.read, 'GET', `/v1/meters/${aMeter.id}/usage/corrections`)).body.pagination.total,
      0,
      'B corrected nothing of A',
    );
  });

  t.test('B cannot credit or void A’s invoice: operators only, and nothing of A changed', async (t) => {
    for (const scope of ['write', 'admin'] as const) {
      t.equal(
        (
          await call(b.tokens[scope], 'POST', `/v1/billing/invoices/${aInvoice}/credit-notes`, {
            amount: 1,
            reason: 'B',
          })
        ).status,
        403,
        `${scope} token: credit note`,
      );
      t.equal(
        (await call(b.tokens[scope], 'POST', `/v1/billing/invoices/${aInvoice}/void`)).status,
        403,
        `${scope} token: void`,
      );
    }
    t.match((await call(a.tokens.read, 'GET', `/v1/billing/invoices/${aInvoice}`)).body, {
      status: 'open',
      amount_credited: 2,
      amount_due: 8,
    });
  });

  t.test('test clocks: another operator’s clock is not found; its customers cannot be moved', (t) =>
    testClockIsolation(t, { api, operator, b, call, made }),
  );

  t.test('the product catalog is shared: B reads the same products', async (t) => {
    const fromA = await call(a.tokens.read, 'GET', '/v1/products');
    const fromB = await call(b.tokens.read, 'GET', '/v1/products');
    t.same(fromB.body, fromA.body);
    t.equal((await call(b.tokens.read, 'GET', `/v1/products/${flat}`)).status, 200);
  });
});
