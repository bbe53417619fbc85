import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { createPaymentProcessor } from '../../services/domain/payments/create.js';
import { deriveKey, hmacHex } from '../../shared/secret.js';

interface Res {
  status: number;
  body: any;
  headers: Headers;
}

function client(base: string) {
  return async (
    method: string,
    path: string,
    opts: { auth?: { authorization: string }; body?: unknown } = {},
  ): Promise<Res> => {
    const headers: Record<string, string> = { ...(opts.auth ?? {}) };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}

const now = new Date();
const YEAR = now.getUTCFullYear() + 3;
const card = (number: string, extra: Record<string, unknown> = {}) => ({
  type: 'card',
  card: { number, exp_month: 12, exp_year: YEAR, cvc: '123', ...extra },
});
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

t.test('payment methods', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const call = client(api.url);
  const a = await createTestAccount(api.infra);
  const b = await createTestAccount(api.infra);
  const storedCount = async (acct: TestAccount) =>
    (
      await api.infra.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_methods WHERE account_id = $1', [
        acct.accountId,
      ])
    ).rows[0]!.n;

  let visaId = '';
  let mastercardId = '';

  t.test('the first card is added as the default, exactly this shape', async (t) => {
    const res = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: card('4242 4242 4242 4242', { exp_month: 7 }),
    });
    t.equal(res.status, 201);
    t.match(res.body.id, /^pm_[0-9A-Za-z]{22}$/);
    t.match(res.body.created_at, ISO_MS);
    t.same(res.body, {
      id: res.body.id,
      type: 'card',
      card: { brand: 'visa', last4: '4242', exp_month: 7, exp_year: YEAR },
      is_default: true,
      created_at: res.body.created_at,
    });
    t.equal(res.headers.get('location'), `/v1/billing/payment-methods/${res.body.id}`);
    visaId = res.body.id;
    const got = await call('GET', res.headers.get('location')!, { auth: a.auth.read });
    t.equal(got.status, 200);
    t.same(got.body, res.body, 'Location serves the same resource');
  });

  t.test('a second card is not the default; PATCH …/default switches exactly one', async (t) => {
    const res = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: card('5555-5555-5555-4444'),
    });
    t.equal(res.status, 201);
    t.same(res.body.card, { brand: 'mastercard', last4: '4444', exp_month: 12, exp_year: YEAR });
    t.equal(res.body.is_default, false);
    mastercardId = res.body.id;

    const patched = await call('PATCH', `/v1/billing/payment-methods/${mastercardId}/default`, { auth: a.auth.write });
    t.equal(patched.status, 200);
    t.same(patched.body, { ...res.body, is_default: true });

    const list = await call('GET', '/v1/billing/payment-methods', { auth: a.auth.read });
    t.same(
      list.body.data.filter((p: any) => p.is_default).map((p: any) => p.id),
      [mastercardId],
      'one default, the chosen one',
    );
    t.equal(list.body.data.find((p: any) => p.id === visaId).is_default, false);
    const billing = await call('GET', '/v1/billing', { auth: a.auth.read });
    t.same(billing.body.payment_method, { id: mastercardId, type: 'card', last4: '4444', brand: 'mastercard' });

    const again = await call('PATCH', `/v1/billing/payment-methods/${mastercardId}/default`, { auth: a.auth.write });
    t.equal(again.status, 200, 'making the default the default again is fine');
    t.equal(again.body.is_default, true);
    const back = await call('PATCH', `/v1/billing/payment-methods/${visaId}/default`, { auth: a.auth.write });
    t.equal(back.body.is_default, true);
    const defaults = await api.infra.pg.query('SELECT id FROM payment_methods WHERE account_id = $1 AND is_default', [
      a.accountId,
    ]);
    t.same(defaults.rows, [{ id: visaId }]);
  });

  t.test('brands detected, numbers normalised, amex takes a 4-digit cvc', async (t) => {
    const cases: [string, string, string, string?][] = [
      ['378282246310005', 'amex', '0005', '1234'],
      ['6011 1111 1111 1117', 'discover', '1117'],
      ['3056-9300-0902-0004', 'diners', '0004'],
      ['3566002020360505', 'jcb', '0505'],
      ['6200000000000005', 'unionpay', '0005'],
      ['9999 9999 9999 9995', 'unknown', '9995'],
    ];
    for (const [number, brand, last4, cvc] of cases) {
      const res = await call('POST', '/v1/billing/payment-methods', {
        auth: a.auth.write,
        body: card(number, cvc ? { cvc } : {}),
      });
      t.equal(res.status, 201, number);
      t.same([res.body.card.brand, res.body.card.last4, res.body.is_default], [brand, last4, false], number);
    }
  });

  t.test('list: newest first, paginated, bounds checked', async (t) => {
    const all = await call('GET', '/v1/billing/payment-methods', { auth: a.auth.read });
    t.equal(all.status, 200);
    t.same(all.body.pagination, { page: 1, per_page: 20, total: 8 });
    t.same(
      all.body.data.map((p: any) => p.card.last4),
      ['9995', '0005', '0505', '0004', '1117', '0005', '4444', '4242'],
      'newest first',
    );
    const p2 = await call('GET', '/v1/billing/payment-methods?page=2&per_page=3', { auth: a.auth.read });
    t.same(p2.body.pagination, { page: 2, per_page: 3, total: 8 });
    t.same(
      p2.body.data.map((p: any) => p.id),
      all.body.data.slice(3, 6).map((p: any) => p.id),
    );
    const past = await call('GET', '/v1/billing/payment-methods?page=9&per_page=3', { auth: a.auth.read });
    t.same(past.body, { data: [], pagination: { page: 9, per_page: 3, total: 8 } });
    const max = await call('GET', '/v1/billing/payment-methods?per_page=100', { auth: a.auth.read });
    t.equal(max.status, 200);
    for (const [q, field] of [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['page=x', 'page'],
      ['limit=5', 'limit'],
    ]) {
      const bad = await call('GET', `/v1/billing/payment-methods?${q}`, { auth: a.auth.read });
      t.equal(bad.status, 422, q);
      t.equal(bad.body.code, 'validation_failed', q);
      t.same(
        bad.body.errors.map((e: any) => e.field),
        [field],
        q,
      );
    }
  });

  t.test('every validation error is a 422 naming the field, and nothing is stored', async (t) => {
    const before = await storedCount(a);
    const thisYear = now.getUTCFullYear();
    const thisMonth = now.getUTCMonth() + 1;
    const lastMonth =
      thisMonth === 1 ? { exp_month: 12, exp_year: thisYear - 1 } : { exp_month: thisMonth - 1, exp_year: thisYear };
    const cases: [string, unknown, string][] = [
      ['Luhn failure', card('4242424242424241'), 'card.number'],
      ['11 digits', card('42424242426'), 'card.number'],
      ['20 digits', card('42424242424242424242'), 'card.number'],
      ['letters', card('4242 4242 4242 424X'), 'card.number'],
      ['number as a JSON number', card(4242424242424242 as unknown as string), 'card.number'],
      ['empty number', card(''), 'card.number'],
      ['month 0', card('4242424242424242', { exp_month: 0 }), 'card.exp_month'],
      ['month 13', card('4242424242424242', { exp_month: 13 }), 'card.exp_month'],
      ['month as string', card('4242424242424242', { exp_month: '12' }), 'card.exp_month'],
      ['expired last year', card('4242424242424242', { exp_month: 12, exp_year: thisYear - 1 }), 'card.exp_year'],
      [
        'expired last month',
        card('4242424242424242', lastMonth),
        lastMonth.exp_year === thisYear ? 'card.exp_month' : 'card.exp_year',
      ],
      ['fractional year', card('4242424242424242', { exp_year: YEAR + 0.5 }), 'card.exp_year'],
      ['cvc too short', card('4242424242424242', { cvc: '12' }), 'card.cvc'],
      ['cvc too long', card('4242424242424242', { cvc: '12345' }), 'card.cvc'],
      ['cvc not digits', card('4242424242424242', { cvc: '12a' }), 'card.cvc'],
      ['cvc as a number', card('4242424242424242', { cvc: 123 }), 'card.cvc'],
      ['amex with 3-digit cvc', card('378282246310005', { cvc: '123' }), 'card.cvc'],
      [
        'missing cvc',
        { type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: YEAR } },
        'card.cvc',
      ],
      ['missing card', { type: 'card' }, 'card'],
      ['card not an object', { type: 'card', card: '4242424242424242' }, 'card'],
      ['type other than card', { ...card('4242424242424242'), type: 'bank_account' }, 'type'],
      ['missing type', { card: card('4242424242424242').card }, 'type'],
      ['unknown top-level field', { ...card('4242424242424242'), nickname: 'x' }, 'nickname'],
      ['unknown card field', card('4242424242424242', { name: 'A B' }), 'card.name'],
      [
        'card and payment_method both',
        { ...card('4242424242424242'), payment_method: 'pm_card_visa' },
        'payment_method',
      ],
      ['payment_method not a pm_ id', { type: 'card', payment_method: 'tok_visa' }, 'payment_method'],
    ];
    for (const [what, body, field] of cases) {
      const res = await call('POST', '/v1/billing/payment-methods', { auth: a.auth.write, body });
      t.equal(res.status, 422, what);
      t.equal(res.body.code, 'validation_failed', what);
      t.same(
        res.body.errors.map((e: any) => e.field),
        [field],
        what,
      );
      t.notOk(
        JSON.stringify(res.body).includes('4242424242424'),
        `${what}: the problem document doesn't echo the number`,
      );
    }
    const all = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: { type: 'card', card: { number: '4242424242424241', exp_month: 13, exp_year: thisYear - 1, cvc: '1' } },
    });
    t.same(
      all.body.errors.map((e: any) => e.field).sort(),
      ['card.cvc', 'card.exp_month', 'card.exp_year', 'card.number'],
      'all problems at once',
    );
    // A Stripe PaymentMethod id is for PAYMENT_PROCESSOR=stripe (docs/payments.md): the sandbox takes card details.
    const token = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: { type: 'card', payment_method: 'pm_card_visa' },
    });
    t.equal(token.status, 422);
    t.equal(token.body.code, 'payment_method_unsupported');
    t.same(
      token.body.errors.map((e: any) => e.field),
      ['payment_method'],
    );
    const none = await fetch(`${api.url}/v1/billing/payment-methods`, { method: 'POST', headers: a.auth.write });
    t.equal(none.status, 422, 'no body');
    t.equal(await storedCount(a), before, 'nothing stored');
  });

  t.test('the sandbox declines 4000000000000002 with 402 card_declined and stores nothing', async (t) => {
    const before = await storedCount(a);
    const res = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: card('4000 0000 0000 0002'),
    });
    t.equal(res.status, 402);
    t.match(res.headers.get('content-type'), /^application\/problem\+json/);
    t.match(res.body, { status: 402, code: 'card_declined', title: 'Payment Required' });
    t.equal(await storedCount(a), before);
    const fresh = await createTestAccount(api.infra);
    const first = await call('POST', '/v1/billing/payment-methods', {
      auth: fresh.auth.write,
      body: card('4000000000000002'),
    });
    t.equal(first.status, 402);
    t.equal(
      (await call('GET', '/v1/billing', { auth: fresh.auth.read })).body.payment_method,
      null,
      'a declined first card leaves no default',
    );
  });

  t.test('4000000000009995 is added, but charging it fails with insufficient_funds; other cards charge', async (t) => {
    const res = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: card('4000000000009995'),
    });
    t.equal(res.status, 201);
    t.same(res.body.card, { brand: 'visa', last4: '9995', exp_month: 12, exp_year: YEAR });
    const processor = createPaymentProcessor(api.infra.pg);
    const row = async (id: string) =>
      (await api.infra.pg.query('SELECT id, processor, processor_token FROM payment_methods WHERE id = $1', [id]))
        .rows[0];
    const poor = await row(res.body.id);
    t.equal(poor.processor, 'sandbox');
    t.same(
      await processor.charge({ paymentMethod: poor, amount: '10.00', currency: 'USD', idempotencyKey: 'inv_1:1' }),
      { status: 'failed', failure_code: 'insufficient_funds' },
    );
    const good = await row(visaId);
    const charged = await processor.charge({
      paymentMethod: good,
      amount: '10.00',
      currency: 'USD',
      idempotencyKey: 'inv_2:1',
    });
    t.equal(charged.status, 'succeeded');
    t.same(
      await processor.charge({ paymentMethod: good, amount: '10.00', currency: 'USD', idempotencyKey: 'inv_2:1' }),
      charged,
      'same key, same charge',
    );
    t.not(
      (await processor.charge({
        paymentMethod: good,
        amount: '10.00',
        currency: 'USD',
        idempotencyKey: 'inv_2:2',
      })) as any,
      charged as any,
    );
  });

  t.test('the number is kept only as a keyed fingerprint: same card, same fingerprint', async (t) => {
    const again = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.write,
      body: card('4242-4242-4242-4242'),
    });
    t.equal(again.status, 201);
    const rows = (
      await api.infra.pg.query('SELECT id, fingerprint FROM payment_methods WHERE id = ANY($1)', [
        [visaId, again.body.id],
      ])
    ).rows;
    t.equal(rows.length, 2);
    t.equal(rows[0].fingerprint, rows[1].fingerprint, 'formatting does not change the fingerprint');
    t.equal(rows[0].fingerprint, hmacHex(deriveKey(config.SECRET_KEY, 'card-fingerprint'), '4242424242424242'));
  });

  t.test('scopes: read may list, not write; no token → 401', async (t) => {
    const post = await call('POST', '/v1/billing/payment-methods', {
      auth: a.auth.read,
      body: card('4242424242424242'),
    });
    t.equal(post.status, 403);
    t.equal(post.body.code, 'insufficient_scope');
    t.match(post.headers.get('www-authenticate'), /error="insufficient_scope"/);
    const patch = await call('PATCH', `/v1/billing/payment-methods/${visaId}/default`, { auth: a.auth.read });
    t.equal(patch.status, 403);
    t.equal((await call('GET', '/v1/billing/payment-methods', { auth: a.auth.read })).status, 200);
    for (const [method, path] of [
      ['GET', '/v1/billing/payment-methods'],
      ['POST', '/v1/billing/payment-methods'],
      ['GET', `/v1/billing/payment-methods/${visaId}`],
      ['PATCH', `/v1/billing/payment-methods/${visaId}/default`],
    ]) {
      const res = await call(method!, path!, method === 'POST' ? { body: card('4242424242424242') } : {});
      t.equal(res.status, 401, `${method} ${path}`);
      t.match(res.headers.get('www-authenticate'), /^Bearer/);
    }
  });

  t.test("isolation: another account never sees or changes A's payment methods", async (t) => {
    t.equal((await call('GET', `/v1/billing/payment-methods/${visaId}`, { auth: b.auth.read })).status, 404);
    const patch = await call('PATCH', `/v1/billing/payment-methods/${mastercardId}/default`, { auth: b.auth.write });
    t.equal(patch.status, 404);
    t.equal(patch.body.code, 'not_found');
    const aDefault = await call('GET', '/v1/billing', { auth: a.auth.read });
    t.equal(aDefault.body.payment_method.id, visaId, "A's default unchanged");
    const list = await call('GET', '/v1/billing/payment-methods', { auth: b.auth.read });
    t.same(list.body, { data: [], pagination: { page: 1, per_page: 20, total: 0 } });
    const own = await call('POST', '/v1/billing/payment-methods', {
      auth: b.auth.write,
      body: card('5105105105105100'),
    });
    t.equal(own.body.is_default, true, "B's first card is B's default, whatever A has");
    const bList = await call('GET', '/v1/billing/payment-methods', { auth: b.auth.read });
    t.same(
      bList.body.data.map((p: any) => p.id),
      [own.body.id],
    );
    t.equal((await call('GET', '/v1/billing/payment-methods/pm_doesnotexist', { auth: a.auth.read })).status, 404);
    t.equal(
      (await call('PATCH', '/v1/billing/payment-methods/pm_doesnotexist/default', { auth: a.auth.write })).status,
      404,
    );
  });

  t.test('concurrent first cards: exactly one becomes the default', async (t) => {
    const c = await createTestAccount(api.infra);
    const results = await Promise.all(
      ['4242424242424242', '5555555555554444', '378282246310005'].map((n) =>
        call('POST', '/v1/billing/payment-methods', {
          auth: c.auth.write,
          body: card(n, n.startsWith('37') ? { cvc: '1234' } : {}),
        }),
      ),
    );
    t.same(
      results.map((r) => r.status),
      [201, 201, 201],
    );
    t.equal(results.filter((r) => r.body.is_default).length, 1);
  });
});
