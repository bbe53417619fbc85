import t from 'tap';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { withTransaction } from '../../shared/clients/postgres.js';
import { changeSubscription } from '../../services/domain/subscriptions/store.js';
import { currentPeriod, periodAt } from '../../services/domain/subscriptions/periods.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function monthBounds(d = new Date()): [string, string] {
  return [
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString(),
    new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString(),
  ];
}

t.test('periods are calendar months in UTC from the first day of the creation month', async (t) => {
  const created = new Date('2026-01-20T10:00:00.000Z');
  t.same(periodAt(created, new Date('2026-01-31T23:59:59.999Z')), {
    start: new Date('2026-01-01T00:00:00Z'),
    end: new Date('2026-02-01T00:00:00Z'),
  });
  t.same(periodAt(created, new Date('2026-02-01T00:00:00.000Z')), {
    start: new Date('2026-02-01T00:00:00Z'),
    end: new Date('2026-03-01T00:00:00Z'),
  });
  t.same(
    periodAt(created, new Date('2026-12-15T00:00:00.000Z')),
    { start: new Date('2026-12-01T00:00:00Z'), end: new Date('2027-01-01T00:00:00Z') },
    'year boundary',
  );
  t.same(
    periodAt(created, new Date('2026-01-19T00:00:00.000Z')).start,
    new Date('2026-01-01T00:00:00Z'),
    'never before the creation month',
  );
  const canceled = currentPeriod(
    { status: 'canceled', created_at: created, canceled_at: new Date('2026-03-05T00:00:00Z') },
    new Date('2026-07-01T00:00:00Z'),
  );
  t.same(
    canceled,
    { start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-04-01T00:00:00Z') },
    'canceled: the month it was canceled in',
  );
});

t.test('subscriptions', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const pg = api.infra.pg;
  const operator = await createTestAccount(api.infra, { operator: true });
  const acct = await createTestAccount(api.infra);
  const other = await createTestAccount(api.infra);

  async function call(method: string, path: string, opts: { token?: string; body?: unknown } = {}) {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(api.url + path, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }
  const product = async (body: object) =>
    (await call('POST', '/v1/products', { token: operator.tokens.admin, body })).body.id as string;
  const w = acct.tokens.write;
  const flatUsd = await product({ name: 'Platform fee', price: 49, currency: 'USD' });
  const meteredUsd = await product({ name: 'Requests', price: 0.0001, currency: 'USD', pricing: 'metered' });
  const otherFlatUsd = await product({ name: 'Support', price: 10, currency: 'usd' });
  const flatEur = await product({ name: 'EU fee', price: 39, currency: 'EUR' });
  const meter = (
    await call('POST', '/v1/meters', { token: w, body: { name: 'requests', unit: 'req', aggregation: 'sum' } })
  ).body.id as string;
  const meter2 = (
    await call('POST', '/v1/meters', { token: w, body: { name: 'requests 2', unit: 'req', aggregation: 'count' } })
  ).body.id as string;
  const foreignMeter = (
    await call('POST', '/v1/meters', {
      token: other.tokens.write,
      body: { name: 'theirs', unit: 'req', aggregation: 'sum' },
    })
  ).body.id as string;

  const outbox = async (subscriptionId?: string) =>
    (
      await pg.query<{ type: string; account_id: string; data: any }>(
        `SELECT type, account_id, data FROM outbox_events WHERE type = 'subscription.updated' AND ($1::text IS NULL OR data->>'subscription_id' = $1) ORDER BY seq`,
        [subscriptionId ?? null],
      )
    ).rows;

  t.test('create → 201 + Location, exact shape, one subscription.updated committed', async (t) => {
    const res = await call('POST', '/v1/subscriptions', {
      token: w,
      body: { items: [{ product_id: flatUsd }, { product_id: meteredUsd, meter_id: meter }] },
    });
    t.equal(res.status, 201);
    t.match(res.body.id, /^sub_[0-9A-Za-z]{22}$/);
    t.equal(res.headers.get('location'), `/v1/subscriptions/${res.body.id}`);
    const [start, end] = monthBounds();
    t.same(res.body, {
      id: res.body.id,
      customer_id: acct.customerId,
      status: 'active',
      items: [
        { product_id: flatUsd, meter_id: null },
        { product_id: meteredUsd, meter_id: meter },
      ],
      currency: 'USD',
      billing_threshold: null,
      plan_id: null,
      plan_version: null,
      interval: 'month',
      interval_count: 1,
      billing_anchor: 'calendar',
      trial_end: null,
      current_period_start: start,
      current_period_end: end,
      scheduled_plan_change: null,
      pause_collection: null,
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: null,
      created_at: res.body.created_at,
      managed_by: 'customer',
      discount: null,
    });
    t.match(res.body.created_at, ISO_MS);
    const got = await call('GET', `/v1/subscriptions/${res.body.id}`, { token: acct.tokens.read });
    t.same(got.body, res.body);
    const events = await outbox(res.body.id);
    t.equal(events.length, 1, 'exactly one event');
    t.same(events[0], {
      type: 'subscription.updated',
      account_id: acct.accountId,
      data: {
        subscription_id: res.body.id,
        status: 'active',
        items: res.body.items,
        plan_id: null,
        plan_version: null,
        billing_threshold: null,
        coupon_id: null,
        cancel_at_period_end: false,
        collection_paused: false,
        cancel_at: null,
        canceled_at: null,
        customer_id: acct.customerId,
      },
    });
  });

  t.test('invalid items → 422 naming the field, and no event', async (t) => {
    const before = (await outbox()).length;
    const cases: [string, unknown, string, RegExp][] = [
      ['no items field', {}, 'items', /required/],
      ['empty items', { items: [] }, 'items', /fewer than 1/],
      [
        'unknown product',
        { items: [{ product_id: 'prod_doesnotexist0000000000' }] },
        'items[0].product_id',
        /no such product/,
      ],
      [
        'metered without meter',
        { items: [{ product_id: flatUsd }, { product_id: meteredUsd }] },
        'items[1].meter_id',
        /required for a metered product/,
      ],
      [
        'metered with null meter',
        { items: [{ product_id: meteredUsd, meter_id: null }] },
        'items[0].meter_id',
        /required/,
      ],
      [
        'flat with a meter',
        { items: [{ product_id: flatUsd, meter_id: meter }] },
        'items[0].meter_id',
        /must be null for a flat product/,
      ],
      [
        'another account’s meter',
        { items: [{ product_id: meteredUsd, meter_id: foreignMeter }] },
        'items[0].meter_id',
        /no such meter/,
      ],
      [
        'unknown meter',
        { items: [{ product_id: meteredUsd, meter_id: 'mtr_doesnotexist000000000000' }] },
        'items[0].meter_id',
        /no such meter/,
      ],
      [
        // The account's first subscription fixed its currency (USD): the EUR-only product has no price in it.
        'two currencies',
        { items: [{ product_id: flatUsd }, { product_id: flatEur }] },
        'items[1].product_id',
        /no price in USD \(it has EUR\)/,
      ],
      [
        'same item twice',
        { items: [{ product_id: flatUsd }, { product_id: flatUsd }] },
        'items[1]',
        /repeats items\[0\]/,
      ],
      ['unknown item field', { items: [{ product_id: flatUsd, seats: 2 }] }, 'items[0].seats', /not a known field/],
      ['product_id not a string', { items: [{ product_id: 7 }] }, 'items[0].product_id', /string/],
      [
        'unknown top-level field',
        { items: [{ product_id: flatUsd }], currency: 'USD' },
        'currency',
        /not a known field/,
      ],
    ];
    for (const [what, body, field, message] of cases) {
      const res = await call('POST', '/v1/subscriptions', { token: w, body });
      t.equal(res.status, 422, what);
      const err = res.body.errors?.find((e: { field: string }) => e.field === field);
      t.ok(err, `${what} names ${field}: ${JSON.stringify(res.body.errors)}`);
      if (err) t.match(err.message, message, what);
    }
    t.equal((await outbox()).length, before, 'no event for a failed request');
    t.equal(
      (await pg.query('SELECT count(*)::int AS n FROM subscriptions WHERE account_id = $1', [acct.accountId])).rows[0]
        .n,
      1,
    );
  });

  t.test('PATCH items and cancel: each change one event; no-ops none; canceled is final', async (t) => {
    const sub = (await call('POST', '/v1/subscriptions', { token: w, body: { items: [{ product_id: flatUsd }] } }))
      .body;
    t.equal((await outbox(sub.id)).length, 1);

    const items = [
      { product_id: otherFlatUsd, meter_id: null },
      { product_id: meteredUsd, meter_id: meter2 },
    ];
    const changed = await call('PATCH', `/v1/subscriptions/${sub.id}`, { token: w, body: { items } });
    t.equal(changed.status, 200);
    t.same(changed.body, { ...sub, items });
    let events = await outbox(sub.id);
    t.equal(events.length, 2);
    const noCancel = { cancel_at_period_end: false, collection_paused: false, cancel_at: null, canceled_at: null };
    const state = { plan_id: null, plan_version: null, billing_threshold: null, coupon_id: null, ...noCancel };
    t.same(events[1].data, {
      subscription_id: sub.id,
      status: 'active',
      items,
      ...state,
      previous_attributes: { items: sub.items },
      customer_id: acct.customerId,
    });

    const same = await call('PATCH', `/v1/subscriptions/${sub.id}`, {
      token: w,
      body: { items: [{ product_id: otherFlatUsd }, { product_id: meteredUsd, meter_id: meter2 }] },
    });
    t.equal(same.status, 200);
    t.equal((await outbox(sub.id)).length, 2, 'the same items: nothing changed, no event');

    const eur = await call('PATCH', `/v1/subscriptions/${sub.id}`, {
      token: w,
      body: { items: [{ product_id: flatEur }] },
    });
    t.equal(eur.status, 422);
    t.equal(eur.body.errors[0].field, 'items[0].product_id');
    t.match(eur.body.errors[0].message, /has no price in USD \(it has EUR\)/);
    for (const [body, field] of [
      [{}, ''],
      [{ status: 'active' }, 'status'],
      [{ status: 'paused' }, 'status'],
      [{ items: [] }, 'items'],
      [{ items: [{ product_id: meteredUsd }] }, 'items[0].meter_id'],
    ] as [unknown, string][]) {
      const res = await call('PATCH', `/v1/subscriptions/${sub.id}`, { token: w, body });
      t.equal(res.status, 422, JSON.stringify(body));
      t.equal(res.body.errors[0].field, field, JSON.stringify(body));
    }
    t.equal((await outbox(sub.id)).length, 2, 'failed changes emit nothing');

    const canceled = await call('PATCH', `/v1/subscriptions/${sub.id}`, { token: w, body: { status: 'canceled' } });
    t.equal(canceled.status, 200);
    t.match(canceled.body.canceled_at, ISO_MS);
    t.same(canceled.body, { ...sub, items, status: 'canceled', canceled_at: canceled.body.canceled_at });
    events = await outbox(sub.id);
    t.equal(events.length, 3);
    const canceledData = {
      subscription_id: sub.id,
      status: 'canceled',
      items,
      ...state,
      canceled_at: canceled.body.canceled_at,
      previous_attributes: { status: 'active', canceled_at: null },
      customer_id: acct.customerId,
    };
    t.same(events[2].data, canceledData, 'subscription.updated carries the subscription as it now is');
    const canceledEvents = await pg.query(
      "SELECT data FROM outbox_events WHERE type = 'subscription.canceled' AND data->>'subscription_id' = $1",
      [sub.id],
    );
    t.same(
      canceledEvents.rows.map((r) => r.data),
      [canceledData],
      'and one subscription.canceled, with the same data',
    );

    const again = await call('PATCH', `/v1/subscriptions/${sub.id}`, { token: w, body: { status: 'canceled' } });
    t.equal(again.status, 200, 'canceling twice is harmless');
    const revive = await call('PATCH', `/v1/subscriptions/${sub.id}`, {
      token: w,
      body: { items: [{ product_id: flatUsd }] },
    });
    t.equal(revive.status, 409);
    t.equal(revive.body.code, 'subscription_canceled');
    t.equal((await outbox(sub.id)).length, 3);
    t.equal(
      (
        await call('PATCH', '/v1/subscriptions/sub_doesnotexist000000000000', {
          token: w,
          body: { status: 'canceled' },
        })
      ).status,
      404,
    );
    t.equal((await call('GET', '/v1/subscriptions/nonsense', { token: w })).status, 404);
  });

  t.test('a change rolled back after its event was written leaves no event and no change', async (t) => {
    const sub = (await call('POST', '/v1/subscriptions', { token: w, body: { items: [{ product_id: flatUsd }] } }))
      .body;
    const before = (await outbox()).length;
    await t.rejects(
      withTransaction(pg, async (c) => {
        const r = await changeSubscription(c, acct.accountId, sub.id, { status: 'canceled' });
        t.equal(r.changed, true);
        const inside = await c.query(
          "SELECT count(*)::int AS n FROM outbox_events WHERE data->>'subscription_id' = $1",
          [sub.id],
        );
        t.equal(
          inside.rows[0].n,
          3,
          'the events (updated at creation; updated and canceled) exist inside the transaction',
        );
        throw new Error('boom after the change');
      }),
      { message: 'boom after the change' },
    );
    t.equal((await outbox()).length, before, 'no event committed');
    t.equal(
      (await call('GET', `/v1/subscriptions/${sub.id}`, { token: w })).body.status,
      'active',
      'no change committed',
    );
  });

  t.test(
    'periods: an old active subscription is in the current month; a canceled one in its cancel month',
    async (t) => {
      const sub = (await call('POST', '/v1/subscriptions', { token: w, body: { items: [{ product_id: flatUsd }] } }))
        .body;
      await pg.query("UPDATE subscriptions SET created_at = now() - interval '75 days' WHERE id = $1", [sub.id]);
      const [start, end] = monthBounds();
      t.match((await call('GET', `/v1/subscriptions/${sub.id}`, { token: w })).body, {
        current_period_start: start,
        current_period_end: end,
      });
      await pg.query(
        "UPDATE subscriptions SET status = 'canceled', canceled_at = '2025-03-10T12:00:00Z', created_at = '2025-01-15T00:00:00Z' WHERE id = $1",
        [sub.id],
      );
      t.match((await call('GET', `/v1/subscriptions/${sub.id}`, { token: w })).body, {
        status: 'canceled',
        current_period_start: '2025-03-01T00:00:00.000Z',
        current_period_end: '2025-04-01T00:00:00.000Z',
        created_at: '2025-01-15T00:00:00.000Z',
      });
    },
  );

  t.test('list: defaults, totals, newest first, status filter, bounds', async (t) => {
    const mine = await createTestAccount(api.infra);
    const ids: string[] = [];
    for (let i = 0; i < 21; i++)
      ids.push(
        (
          await call('POST', '/v1/subscriptions', {
            token: mine.tokens.write,
            body: { items: [{ product_id: flatUsd }] },
          })
        ).body.id,
      );
    await call('PATCH', `/v1/subscriptions/${ids[0]}`, { token: mine.tokens.write, body: { status: 'canceled' } });
    const newest = [...ids].reverse();
    const first = await call('GET', '/v1/subscriptions', { token: mine.tokens.read });
    t.same(first.body.pagination, { page: 1, per_page: 20, total: 21 });
    t.same(
      first.body.data.map((s: { id: string }) => s.id),
      newest.slice(0, 20),
    );
    t.same(first.body.data[0].items, [{ product_id: flatUsd, meter_id: null }], 'items are included in lists');
    const second = await call('GET', '/v1/subscriptions?page=2', { token: mine.tokens.read });
    t.same(
      second.body.data.map((s: { id: string }) => s.id),
      [ids[0]],
    );
    const canceled = await call('GET', '/v1/subscriptions?status=canceled', { token: mine.tokens.read });
    t.same(canceled.body, { data: [second.body.data[0]], pagination: { page: 1, per_page: 20, total: 1 } });
    t.equal(
      (await call('GET', '/v1/subscriptions?status=active&per_page=100', { token: mine.tokens.read })).body.pagination
        .total,
      20,
    );

    await pg.query("UPDATE subscriptions SET created_at = '2026-03-01T00:00:00Z' WHERE account_id = $1", [
      mine.accountId,
    ]);
    const all = await call('GET', '/v1/subscriptions?per_page=100', { token: mine.tokens.read });
    t.same(
      all.body.data.map((s: { id: string }) => s.id),
      [...ids].sort().reverse(),
      'equal times: id descending',
    );

    for (const [qs, field] of [
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['status=paused', 'status'],
    ]) {
      const res = await call('GET', `/v1/subscriptions?${qs}`, { token: mine.tokens.read });
      t.equal(res.status, 422, qs);
      t.equal(res.body.errors[0].field, field, qs);
    }
  });
});
