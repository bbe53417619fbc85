import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { withTransaction } from '../../shared/clients/postgres.js';
import { redeemPromotionCode } from '../../services/domain/promotion-codes/redeem.js';

/**
 * Promotion codes (issue 44 item 2, docs/checkout.md) against the real api and Postgres: admin-only routes, codes
 * unique whatever their case, each refusal a precise problem, and the counting property — N concurrent redemptions of
 * a code with max_redemptions k make exactly min(N, k), whatever N and k.
 */
t.test('promotion codes', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true });
  const pg = api.infra.pg;
  const ADMIN = operator.tokens.admin;
  const call = (method: string, path: string, body?: unknown, token = ADMIN) =>
    callJson(api.url, token, method, path, body);
  const coupon = (await call('POST', '/v1/coupons', { name: 'TEN', percent_off: 10, duration: 'forever' })).body.id;
  const redeem = (code: string, accountId: string | null = null, now = new Date()) =>
    withTransaction(pg, (c) => redeemPromotionCode(c, code, accountId, now));

  await t.test('create, get, list, deactivate: admin only, exact fields', async (t) => {
    const r = await call('POST', '/v1/promotion_codes', {
      coupon_id: coupon,
      code: 'Spring25',
      max_redemptions: 3,
      expires_at: '2030-01-01T00:00:00Z',
      first_time_only: true,
    });
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.equal(r.headers.get('location'), `/v1/promotion_codes/${r.body.id}`);
    t.match(r.body, {
      id: /^promo_/,
      coupon_id: coupon,
      code: 'Spring25',
      max_redemptions: 3,
      times_redeemed: 0,
      expires_at: '2030-01-01T00:00:00.000Z',
      first_time_only: true,
      active: true,
    });
    const got = await call('GET', `/v1/promotion_codes/${r.body.id}`);
    t.same(got.body, r.body);
    const byCode = await call('GET', `/v1/promotion_codes?code=SPRING25`);
    t.same(
      byCode.body.data.map((p: any) => p.id),
      [r.body.id],
      'found by its code in any case',
    );
    const byCoupon = await call('GET', `/v1/promotion_codes?coupon_id=${coupon}`);
    t.ok(byCoupon.body.data.some((p: any) => p.id === r.body.id));
    const customer = await createTestAccount(api.infra);
    for (const [m, p] of [
      ['GET', '/v1/promotion_codes'],
      ['GET', `/v1/promotion_codes/${r.body.id}`],
      ['POST', '/v1/promotion_codes'],
      ['POST', `/v1/promotion_codes/${r.body.id}/deactivate`],
    ] as const) {
      const refused = await call(m, p, m === 'POST' ? {} : undefined, customer.tokens.write);
      t.equal(refused.status, 403, `${m} ${p} is the operator's`);
    }
    const off = await call('POST', `/v1/promotion_codes/${r.body.id}/deactivate`);
    t.equal(off.status, 200);
    t.equal(off.body.active, false);
    const audit = await pg.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE operation = 'POST /v1/promotion_codes/:promotion_code_id/deactivate'`,
    );
    t.equal(audit.rows[0].n, 1, 'the deactivation is audited');
    t.equal((await call('GET', '/v1/promotion_codes/promo_nope')).status, 404);
  });

  await t.test('bad input: precise problems, nothing written', async (t) => {
    const before = (await pg.query('SELECT count(*)::int AS n FROM promotion_codes')).rows[0].n;
    const cases: [unknown, number, string, string?][] = [
      [{ coupon_id: coupon, code: 'has space' }, 422, 'code'],
      [{ coupon_id: coupon, code: '' }, 422, 'code'],
      [{ coupon_id: coupon, code: 'x'.repeat(65) }, 422, 'code'],
      [{ coupon_id: 'coupon_unknown', code: 'NOPE' }, 422, 'coupon_id'],
      [{ coupon_id: coupon, code: 'PAST', expires_at: '2020-01-01T00:00:00Z' }, 422, 'expires_at'],
      [{ coupon_id: coupon, code: 'ZERO', max_redemptions: 0 }, 422, 'max_redemptions'],
      [{ coupon_id: coupon, code: 'spring25' }, 409, 'code', 'promotion_code_taken'],
      [{ coupon_id: coupon, code: 'EXTRA', extra: 1 }, 422, 'extra'],
    ];
    for (const [body, status, field, code] of cases) {
      const r = await call('POST', '/v1/promotion_codes', body);
      t.equal(r.status, status, `${JSON.stringify(body)} → ${status}: ${JSON.stringify(r.body)}`);
      t.equal(r.headers.get('content-type'), 'application/problem+json');
      t.ok(
        r.body.errors?.some((e: any) => e.field === field),
        `names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
      if (code) t.equal(r.body.code, code);
    }
    t.equal((await pg.query('SELECT count(*)::int AS n FROM promotion_codes')).rows[0].n, before);
  });

  await t.test('redemption refusals: unknown, inactive, expired, first-time only, exhausted', async (t) => {
    const make = async (code: string, extra: Record<string, unknown> = {}) =>
      (await call('POST', '/v1/promotion_codes', { coupon_id: coupon, code, ...extra })).body;
    const refusal = async (p: Promise<unknown>) =>
      p.then(
        () => ({ code: 'none' }),
        (e: any) => ({ code: e.code as string, field: e.errors?.[0]?.field as string }),
      );
    t.match(await refusal(redeem('NO-SUCH-CODE')), { code: 'promotion_code_invalid', field: 'promotion_code' });
    const off = await make('GONE');
    await call('POST', `/v1/promotion_codes/${off.id}/deactivate`);
    t.match(await refusal(redeem('gone')), { code: 'promotion_code_inactive' });
    await make('SOON', { expires_at: new Date(Date.now() + 60_000).toISOString() });
    t.match(await refusal(redeem('SOON', null, new Date(Date.now() + 120_000))), { code: 'promotion_code_expired' });
    await make('FIRST', { first_time_only: true });
    const veteran = await createTestAccount(api.infra);
    const sub = (
      await call('POST', '/v1/subscriptions', {
        customer_id: veteran.customerId,
        items: [{ product_id: (await call('POST', '/v1/products', { name: 'p', price: 1, currency: 'USD' })).body.id }],
      })
    ).body.id;
    await insertInvoice(pg, {
      accountId: veteran.accountId,
      customerId: veteran.customerId,
      subscriptionId: sub,
      amount: '1',
      periodStart: '2026-01-01',
      periodEnd: '2026-01-31',
    });
    t.match(await refusal(redeem('first', veteran.accountId)), { code: 'promotion_code_first_time_only' });
    const newcomer = await createTestAccount(api.infra);
    t.match(await redeem('First', newcomer.accountId), { code: 'FIRST' }, 'a customer never invoiced redeems it');
    await make('ONCE', { max_redemptions: 1 });
    await redeem('once');
    t.match(await refusal(redeem('ONCE')), { code: 'promotion_code_exhausted' });
    const row = (await call('GET', '/v1/promotion_codes?code=ONCE')).body.data[0];
    t.equal(row.times_redeemed, 1, 'the refused redemption counted nothing');
  });

  await t.test('property: N concurrent redemptions of k slots → exactly min(N, k) succeed', async (t) => {
    const cases: [number, number][] = [
      [8, 3],
      [3, 8],
      [6, 6],
      [10, 1],
    ];
    for (const [n, k] of cases) {
      const code = `RACE-${n}-${k}`;
      const made = await call('POST', '/v1/promotion_codes', { coupon_id: coupon, code, max_redemptions: k });
      const results = await Promise.allSettled(Array.from({ length: n }, () => redeem(code)));
      const won = results.filter((r) => r.status === 'fulfilled').length;
      const lost = results.filter((r) => r.status === 'rejected');
      t.equal(won, Math.min(n, k), `N=${n}, k=${k}: ${Math.min(n, k)} succeed`);
      t.ok(
        lost.every((r) => (r as PromiseRejectedResult).reason.code === 'promotion_code_exhausted'),
        'every other is refused as exhausted',
      );
      const row = (await call('GET', `/v1/promotion_codes/${made.body.id}`)).body;
      t.equal(row.times_redeemed, Math.min(n, k), 'counted exactly once each');
    }
  });
});
