import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { readPdf } from '../fixtures/pdf.js';
import { newId } from '../../shared/ids.js';
import { hostedInvoiceUrl } from '../../services/domain/hosted-pages/links.js';
import { hostedKey } from '../../services/domain/hosted-pages/tokens.js';
import { bodyValidator } from '../../shared/http/validation.js';
import { DomainError } from '../../shared/errors.js';
import { createInvoicePdfPool, runPooled } from '../../services/workers/pool.js';

/**
 * Invoices read side (docs/design.md §8 Invoice): list, get and PDF download against the real api and Postgres.
 * There is no billing run yet, so invoices are inserted as rows (test/fixtures/invoices.ts), exactly as
 * the billing run will write them.
 */
t.test('invoices', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const hostedUrl = (id: string) => hostedInvoiceUrl(hostedKey(config.SECRET_KEY), config.PUBLIC_BASE_URL, id);
  const operator = await createTestAccount(api.infra, { operator: true });
  const a = await createTestAccount(api.infra, { name: 'Acme Widgets Ltd' });
  const b = await createTestAccount(api.infra, { name: 'Bravo GmbH' });
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);
  const made = async (token: string, method: string, path: string, body?: unknown) => {
    const r = await call(token, method, path, body);
    if (r.status >= 300) throw new Error(`set-up ${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const download = (token: string, id: string) =>
    fetch(`${api.url}/v1/billing/invoices/${id}/download`, { headers: { authorization: `Bearer ${token}` } });

  const plan = await made(operator.tokens.admin, 'POST', '/v1/products', {
    name: 'Pro plan',
    price: 49.99,
    currency: 'USD',
  });
  const calls = await made(operator.tokens.admin, 'POST', '/v1/products', {
    name: 'API calls',
    price: 0.000000001,
    currency: 'USD',
    pricing: 'metered',
  });
  const yenPlan = await made(operator.tokens.admin, 'POST', '/v1/products', {
    name: 'Basic (JP)',
    price: 1000,
    currency: 'JPY',
  });
  const aMeter = await made(a.tokens.write, 'POST', '/v1/meters', {
    name: 'API requests',
    unit: 'requests',
    aggregation: 'sum',
  });
  const aSub = await made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: plan.id }, { product_id: calls.id, meter_id: aMeter.id }],
  });
  // A customer bills in one currency (price books, docs/plans.md): the yen subscription is another customer's.
  const j = await createTestAccount(api.infra, { name: 'Acme Japan KK' });
  const jYenSub = await made(j.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: yenPlan.id }] });
  const bSub = await made(b.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan.id }] });
  await made(a.tokens.write, 'PATCH', '/v1/billing', {
    billing_address: { line1: '221B Baker Street', city: 'London', state: 'Greater London', zip: 'NW1 6XE' },
  });

  // A's January invoice: a flat line and a metered one (123,456,789,012 calls at 0.000000001 → 123.456789012 → 123.46).
  const january = await insertInvoice(api.infra.pg, {
    accountId: a.accountId,
    customerId: a.customerId,
    subscriptionId: aSub.id,
    status: 'paid',
    amount: '173.45',
    periodStart: '2026-01-01',
    periodEnd: '2026-01-31',
    attemptCount: 1,
    createdAt: '2026-02-01T01:00:00.123Z',
    paidAt: '2026-02-01T01:00:02.5Z',
    lines: [
      { product_id: plan.id, description: 'Pro plan', quantity: '1', unit_price: '49.99', amount: '49.99' },
      {
        product_id: calls.id,
        meter_id: aMeter.id,
        description: 'API calls — 123,456,789,012 requests',
        quantity: '123456789012',
        unit_price: '0.000000001',
        amount: '123.46',
      },
    ],
  });
  const januaryJson = {
    id: january,
    // The deployment's invoice series: January is this database's first invoice, February its second.
    number: '000001',
    customer_id: a.customerId,
    subscription_id: aSub.id,
    status: 'paid',
    reason: 'period',
    currency: 'USD',
    // Written before tax (the fixture, like invoices of earlier releases): subtotal = amount, no tax, due on issue.
    subtotal: 173.45,
    tax: 0,
    amount: 173.45,
    amount_credited: 0,
    amount_due: 0,
    period_start: '2026-01-01',
    period_end: '2026-01-31',
    due_date: '2026-02-01',
    tax_exempt: 'none',
    lines: [
      {
        type: 'flat',
        product_id: plan.id,
        meter_id: null,
        description: 'Pro plan',
        quantity: 1,
        unit_price: 49.99,
        amount: 49.99,
      },
      {
        type: 'usage',
        product_id: calls.id,
        meter_id: aMeter.id,
        description: 'API calls — 123,456,789,012 requests',
        quantity: 123456789012,
        unit_price: 0.000000001,
        amount: 123.46,
      },
    ],
    attempt_count: 1,
    next_payment_attempt_at: null,
    last_payment_error: null,
    payment_attempt_status: null, // written as rows here: no payment attempt on record
    dispute_status: null,
    created_at: '2026-02-01T01:00:00.123Z',
    paid_at: '2026-02-01T01:00:02.500Z',
    emailed_at: null, // no SMTP_URL here: never emailed (docs/emails.md)
    // Derived from SECRET_KEY, never stored (docs/payments.md "Hosted pages").
    hosted_invoice_url: hostedUrl(january),
  };
  // A's February invoice: open, payment failed twice so far.
  const february = await insertInvoice(api.infra.pg, {
    accountId: a.accountId,
    customerId: a.customerId,
    subscriptionId: aSub.id,
    amount: '49.99',
    periodStart: '2026-02-01',
    periodEnd: '2026-02-28',
    attemptCount: 2,
    createdAt: '2026-03-01T01:00:00Z',
    lines: [{ product_id: plan.id, description: 'Pro plan', quantity: '1', unit_price: '49.99', amount: '49.99' }],
  });
  const bInvoice = await insertInvoice(api.infra.pg, {
    accountId: b.accountId,
    customerId: b.customerId,
    subscriptionId: bSub.id,
    amount: '49.99',
    periodStart: '2026-01-01',
    periodEnd: '2026-01-31',
    createdAt: '2026-02-01T01:00:00Z',
    lines: [{ product_id: plan.id, description: 'Pro plan', quantity: '1', unit_price: '49.99', amount: '49.99' }],
  });

  t.test('GET one invoice: every field, money as exact JSON numbers, dates and RFC 3339 ms times', async (t) => {
    const res = await fetch(`${api.url}/v1/billing/invoices/${january}`, { headers: a.auth.read });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/json');
    const text = await res.text();
    t.same(JSON.parse(text), januaryJson);
    t.match(text, /"unit_price":0\.000000001[,}]/, 'a 9-decimal price is written digit for digit, not as 1e-9');
    t.match(text, /"quantity":123456789012[,}]/);
    t.match(text, /"amount":173\.45,/);
    const feb = await call(a.tokens.read, 'GET', `/v1/billing/invoices/${february}`);
    t.same(feb.body, {
      id: february,
      number: '000002',
      customer_id: a.customerId,
      subscription_id: aSub.id,
      status: 'open',
      reason: 'period',
      currency: 'USD',
      subtotal: 49.99,
      tax: 0,
      amount: 49.99,
      amount_credited: 0,
      amount_due: 49.99,
      period_start: '2026-02-01',
      period_end: '2026-02-28',
      due_date: '2026-03-01',
      tax_exempt: 'none',
      lines: [
        {
          type: 'flat',
          product_id: plan.id,
          meter_id: null,
          description: 'Pro plan',
          quantity: 1,
          unit_price: 49.99,
          amount: 49.99,
        },
      ],
      attempt_count: 2,
      next_payment_attempt_at: null,
      last_payment_error: null,
      payment_attempt_status: null,
      dispute_status: null,
      created_at: '2026-03-01T01:00:00.000Z',
      paid_at: null,
      emailed_at: null,
      hosted_invoice_url: hostedUrl(february),
    });
  });

  t.test('one invoice per subscription and period (the billing run relies on it)', async (t) => {
    await t.rejects(
      insertInvoice(api.infra.pg, {
        accountId: a.accountId,
        customerId: a.customerId,
        subscriptionId: aSub.id,
        amount: '1',
        periodStart: '2026-01-01',
        periodEnd: '2026-01-31',
      }),
      { code: '23505' },
    );
    await t.rejects(
      insertInvoice(api.infra.pg, {
        accountId: a.accountId,
        customerId: a.customerId,
        subscriptionId: aSub.id,
        status: 'paid',
        amount: '1',
        periodStart: '2025-01-01',
        periodEnd: '2025-01-31',
      }),
      { code: '23514' },
      'paid needs paid_at',
    );
    const listed = await call(a.tokens.read, 'GET', '/v1/billing/invoices');
    t.equal(listed.body.pagination.total, 2, 'nothing was added');
  });

  t.test('404 for unknown ids and for another account’s invoice, on get and download', async (t) => {
    for (const id of [newId('inv'), 'prod_notaninvoice', 'inv_', bInvoice]) {
      const got = await call(a.tokens.read, 'GET', `/v1/billing/invoices/${id}`);
      t.equal(got.status, 404, `get ${id}`);
      t.equal(got.body.code, 'not_found');
      const pdf = await download(a.tokens.read, id);
      t.equal(pdf.status, 404, `download ${id}`);
      t.equal(pdf.headers.get('content-type'), 'application/problem+json');
      t.equal(((await pdf.json()) as any).code, 'not_found');
    }
    const fromB = await call(b.tokens.read, 'GET', `/v1/billing/invoices/${january}`);
    t.equal(fromB.status, 404);
    t.notOk(JSON.stringify(fromB.body).includes(a.customerId), 'the answer names nothing of A');
  });

  t.test('lists show only the caller’s invoices', async (t) => {
    const ofA = await call(a.tokens.read, 'GET', '/v1/billing/invoices');
    t.equal(ofA.status, 200);
    t.same(
      ofA.body.data.map((i: { id: string }) => i.id),
      [february, january],
      'newest first',
    );
    t.same(ofA.body.data[1], januaryJson, 'list items are the full invoice, lines included');
    t.same(ofA.body.pagination, { page: 1, per_page: 20, total: 2 });
    const ofB = await call(b.tokens.read, 'GET', '/v1/billing/invoices?per_page=100');
    t.same(
      ofB.body.data.map((i: { id: string }) => i.id),
      [bInvoice],
    );
    t.equal(ofB.body.pagination.total, 1);
  });

  t.test('list: pagination defaults and bounds, newest first with ties by id, status filter', async (t) => {
    // A fresh account with 23 invoices: one subscription, monthly periods 2024-01 … 2025-11, created at each
    // period's end; the last two share a created_at (ties go by id, descending).
    const c = await createTestAccount(api.infra);
    const cSub = await made(c.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan.id }] });
    const statuses = ['open', 'paid', 'uncollectible', 'void'] as const;
    const made23: { id: string; createdAt: string; status: string }[] = [];
    for (let i = 0; i < 23; i++) {
      const start = new Date(Date.UTC(2024, i, 1));
      const end = new Date(Date.UTC(2024, i + 1, 0));
      const createdAt = i === 22 ? made23[21]!.createdAt : new Date(Date.UTC(2024, i + 1, 1, 1)).toISOString();
      const status = statuses[i % 4]!;
      const id = await insertInvoice(api.infra.pg, {
        accountId: c.accountId,
        customerId: c.customerId,
        subscriptionId: cSub.id,
        status,
        amount: '49.99',
        periodStart: start.toISOString().slice(0, 10),
        periodEnd: end.toISOString().slice(0, 10),
        createdAt,
        paidAt: status === 'paid' ? createdAt : null,
        lines: [{ product_id: plan.id, description: 'Pro plan', quantity: '1', unit_price: '49.99', amount: '49.99' }],
      });
      made23.push({ id, createdAt, status });
    }
    // Postgres runs with --locale=C: ids compare bytewise, as JS strings do.
    const expected = [...made23]
      .sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1))
      .map((x) => x.id);
    const ids = (body: any) => body.data.map((i: { id: string }) => i.id);

    const first = await call(c.tokens.read, 'GET', '/v1/billing/invoices');
    t.equal(first.status, 200);
    t.same(first.body.pagination, { page: 1, per_page: 20, total: 23 }, 'defaults: page 1, 20 per page');
    t.same(ids(first.body), expected.slice(0, 20));
    const second = await call(c.tokens.read, 'GET', '/v1/billing/invoices?page=2');
    t.same(ids(second.body), expected.slice(20));
    t.same(second.body.pagination, { page: 2, per_page: 20, total: 23 });
    const beyond = await call(c.tokens.read, 'GET', '/v1/billing/invoices?page=5&per_page=10');
    t.same(beyond.body, { data: [], pagination: { page: 5, per_page: 10, total: 23 } });
    const max = await call(c.tokens.read, 'GET', '/v1/billing/invoices?per_page=100');
    t.same(ids(max.body), expected);
    const small = await call(c.tokens.read, 'GET', '/v1/billing/invoices?page=3&per_page=4');
    t.same(ids(small.body), expected.slice(8, 12));

    for (const status of statuses) {
      const r = await call(c.tokens.read, 'GET', `/v1/billing/invoices?status=${status}&per_page=100`);
      t.equal(r.status, 200);
      const want = expected.filter((id) => made23.find((x) => x.id === id)!.status === status);
      t.same(ids(r.body), want, `status=${status}`);
      t.equal(r.body.pagination.total, want.length);
      t.ok(r.body.data.every((i: { status: string }) => i.status === status));
    }

    const bad: [string, string][] = [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['per_page=ten', 'per_page'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['status=drafts', 'status'],
      ['status=PAID', 'status'],
      ['sort=asc', 'sort'],
    ];
    for (const [query, field] of bad) {
      const r = await call(c.tokens.read, 'GET', `/v1/billing/invoices?${query}`);
      t.equal(r.status, 422, query);
      t.equal(r.body.code, 'validation_failed', query);
      t.same(
        r.body.errors.map((e: { field: string }) => e.field),
        [field],
        `${query} names ${field}`,
      );
    }
    const badStatus = await call(c.tokens.read, 'GET', '/v1/billing/invoices?status=drafts');
    t.same(badStatus.body.errors, [
      { field: 'status', message: 'must be one of "draft", "open", "paid", "uncollectible", "void"' },
    ]);
  });

  t.test('download: a real PDF with the customer, address, period, every line and the total', async (t) => {
    const res = await download(a.tokens.read, january);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/pdf');
    t.equal(res.headers.get('content-disposition'), `attachment; filename="${january}.pdf"`);
    t.ok(res.headers.get('x-request-id'));
    const pdf = Buffer.from(await res.arrayBuffer());
    t.equal(Number(res.headers.get('content-length')), pdf.length);
    t.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    const facts = readPdf(pdf); // throws unless header, xref and trailer are consistent
    t.equal(facts.pages, 1);
    // Every stream's dictionary names /FlateDecode (the embedded fonts' binary data may hold any bytes, "BT" too).
    const streamDicts = [...pdf.toString('latin1').matchAll(/<<([^<>]*(?:<<[^<>]*>>[^<>]*)*)>>\s*stream\r?\n/g)];
    t.ok(streamDicts.length > 0, 'the PDF has streams');
    t.ok(
      streamDicts.every((m) => m[1]!.includes('/FlateDecode')),
      'content streams are compressed',
    );
    for (const expected of [
      'Acme Widgets Ltd',
      '221B Baker Street',
      'London, Greater London NW1 6XE',
      '2026-01-01 to 2026-01-31',
      'Paid',
      'Pro plan',
      'API calls — 123,456,789,012 requests',
      '123,456,789,012',
      '0.000000001',
      '123.46',
      '49.99',
      '173.45 USD',
    ]) {
      t.ok(facts.text.includes(expected), `shows ${expected}`);
    }
    for (const id of [january, a.customerId, aSub.id]) t.notOk(facts.text.includes(id), `no internal id (${id})`);
    t.notOk(facts.text.includes('Bravo GmbH'), 'nothing of B');
  });

  t.test('download: no address on file, zero-decimal currency, multi-page invoices', async (t) => {
    // B has no billing address.
    const ofB = readPdf(Buffer.from(await (await download(b.tokens.read, bInvoice)).arrayBuffer()));
    t.ok(ofB.text.includes('No billing address on file'));
    t.notOk(ofB.text.includes(b.customerId), 'the customer by name, not by id');
    t.ok(ofB.text.includes('Bravo GmbH'));
    t.ok(ofB.text.includes('49.99 USD'));
    t.notOk(ofB.text.includes('221B Baker Street'), 'not A’s address');

    const yen = await insertInvoice(api.infra.pg, {
      accountId: j.accountId,
      customerId: j.customerId,
      subscriptionId: jYenSub.id,
      currency: 'JPY',
      amount: '1234000',
      periodStart: '2026-01-01',
      periodEnd: '2026-01-31',
      lines: Array.from({ length: 60 }, (_, i) => ({
        product_id: yenPlan.id,
        description: `Basic (JP) seat ${i + 1}`,
        quantity: '1',
        unit_price: '1000',
        amount: i === 59 ? '1175000' : '1000',
      })),
    });
    const res = await download(j.tokens.read, yen);
    t.equal(res.status, 200);
    const facts = readPdf(Buffer.from(await res.arrayBuffer()));
    t.ok(facts.pages >= 2, `60 lines need more than one page (${facts.pages})`);
    t.ok(facts.text.includes('Basic (JP) seat 1\n'), 'first line');
    t.ok(facts.text.includes('Basic (JP) seat 60\n'), 'last line');
    t.ok(facts.text.includes('1,234,000 JPY'), 'JPY has no decimals');
    t.notOk(facts.text.includes('1,000.00'), 'no decimals on JPY unit prices');
    t.equal(facts.text.split('Amount (JPY)').length - 1, facts.pages, 'the table header repeats on every page');
  });

  t.test('/openapi.json documents the three operations and their real answers', async (t) => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as any;
    const list = doc.paths['/v1/billing/invoices'].get;
    const one = doc.paths['/v1/billing/invoices/{invoice_id}'].get;
    const pdf = doc.paths['/v1/billing/invoices/{invoice_id}/download'].get;
    for (const op of [list, one, pdf]) t.same(op.security, [{ oauth2: ['read'] }]);
    t.match(
      list.parameters.find((p: any) => p.name === 'status'),
      { in: 'query', required: false, schema: { enum: ['draft', 'open', 'paid', 'uncollectible', 'void'] } },
    );
    t.ok(pdf.responses['200'].content['application/pdf'], 'the download is documented as application/pdf');
    t.ok(pdf.responses['404'] && pdf.responses['503']);
    const checks: [string, object, unknown][] = [
      [
        'list',
        list.responses['200'].content['application/json'].schema,
        (await call(a.tokens.read, 'GET', '/v1/billing/invoices')).body,
      ],
      [
        'get',
        one.responses['200'].content['application/json'].schema,
        (await call(a.tokens.read, 'GET', `/v1/billing/invoices/${january}`)).body,
      ],
    ];
    for (const [what, schema, body] of checks) {
      const v = bodyValidator(schema);
      t.ok(v.check(body), `${what} matches its documented schema: ${JSON.stringify(v.check.errors)}`);
    }
  });

  t.test('concurrent downloads are all served by the worker pool', async (t) => {
    const started = performance.now();
    const all = await Promise.all(Array.from({ length: 12 }, () => download(a.tokens.read, january)));
    const bodies = await Promise.all(
      all.map(async (r) => ({ status: r.status, pdf: Buffer.from(await r.arrayBuffer()) })),
    );
    t.ok(bodies.every((b) => b.status === 200));
    t.ok(bodies.every((b) => readPdf(b.pdf).text.includes('173.45 USD')));
    t.ok(
      bodies.every((b) => b.pdf.equals(bodies[0]!.pdf)),
      'the same invoice renders to the same bytes',
    );
    t.comment(`12 concurrent PDF downloads: ${(performance.now() - started).toFixed(0)} ms`);
  });

  t.test('a full render queue answers 503 with Retry-After instead of piling up', async (t) => {
    // A pool as the module makes it, shrunk to one thread and one waiting task.
    const pool = createInvoicePdfPool({ maxThreads: 1, maxQueue: 1 });
    t.teardown(() => pool.destroy());
    const task = {
      invoice: {
        id: january,
        customer_id: a.customerId,
        subscription_id: aSub.id,
        status: 'open' as const,
        currency: 'USD',
        amount: '1',
        period_start: '2026-01-01',
        period_end: '2026-01-31',
        created_at: new Date().toISOString(),
        paid_at: null,
      },
      lines: [],
      customer: { name: 'x' },
      address: null,
    };
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => runPooled(pool, task, 'invoice PDF')));
    const done = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    t.ok(done.length >= 1 && refused.length >= 1, `${done.length} rendered, ${refused.length} refused`);
    for (const err of refused) {
      t.ok(err instanceof DomainError);
      t.match(err, { status: 503, code: 'unavailable', headers: { 'Retry-After': '1' } });
    }
  });
});
