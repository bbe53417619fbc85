import { evaluateAlerts } from '../../services/domain/alerts/evaluate.js';
import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { callJson } from '../fixtures/matrix.js';
import { startRoleProcess } from '../fixtures/role-process.js';
import { Decimal } from '../../shared/money/decimal.js';
import { newId } from '../../shared/ids.js';

/**
 * Progressive billing (issue 28, docs/billing.md "Progressive billing"): a subscription's billing_threshold issues
 * a `threshold` invoice for the amount so far whenever the period's amount not yet billed reaches it, charged at
 * once; the period's final invoice deducts them, one line each. The worked example to the cent — a tiered,
 * taxed product, a prepaid credit, a late record — through `meterline billing run` processes, two at once and one
 * killed with SIGKILL mid-run.
 */
const sum = (xs: (number | string)[]) => xs.reduce<Decimal>((s, x) => s.plus(String(x)), new Decimal(0)).toNumber();

t.test('progressive billing', async (t) => {
  const w = await billingWorld(t);
  const ADMIN = w.operator.tokens.admin;
  const pg = w.api.infra.pg;
  const vat = (await w.made(ADMIN, 'POST', '/v1/tax_rates', { name: 'VAT', percentage: 19, inclusive: false })).id;
  const plan = await w.product('Plan', 10, 'USD');
  const tiered = (
    await w.made(ADMIN, 'POST', '/v1/products', {
      name: 'API calls',
      currency: 'USD',
      pricing: 'tiered',
      tiers_mode: 'graduated',
      tiers: [
        { up_to: 1000, unit_price: 0.01 },
        { up_to: null, unit_price: 0.005 },
      ],
      tax_rate_ids: [vat],
    })
  ).id;
  const metered = await w.product('Calls', 0.01, 'USD', 'metered');

  await t.test('the worked example: two threshold invoices, a final one deducting them, to the cent', async (t) => {
    const a = await createTestAccount(w.api.infra, { name: 'Progressive Co' });
    await w.card(a);
    const calls = await w.meter(a, 'Calls', 'requests', 'counter', 'sum');
    await w.made(ADMIN, 'POST', '/v1/billing/credits', {
      account_id: a.accountId,
      currency: 'USD',
      amount: 5,
      description: 'Welcome credit',
    });
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }, { product_id: tiered, meter_id: calls }],
      billing_threshold: { amount: 15 },
    });
    t.same(sub.billing_threshold, { amount: 15 }, 'the threshold as set');
    await w.backdate(sub.id, '2026-10-01T00:00:00Z');
    const invoices = async () =>
      (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
        .filter((i: any) => i.subscription_id === sub.id)
        .sort((x: any, y: any) => x.created_at.localeCompare(y.created_at));
    const runAt = async (now: string) => {
      const r = await w.run(now);
      t.equal(r.code, 0, r.stderr.slice(-2000));
      return r.json;
    };
    const octoberShows = (total: number) =>
      waitUntil(
        async () =>
          (
            await w.made(
              a.tokens.read,
              'GET',
              `/v1/meters/${calls}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
            )
          ).value === total,
        `October at ${total}`,
      );

    // 1,500 calls: 1,000 × 0.01 + 500 × 0.005 = 12.50, VAT 19 % 2.375 → 2.38; + Plan 10 = 24.88; − credit 5 = 19.88 ≥ 15.
    await w.usage(a, calls, [{ value: 1500, timestamp: '2026-10-02T00:00:00Z' }]);
    await octoberShows(1500);
    await runAt('2026-10-05T00:00:00Z');
    const [first] = await invoices();
    t.match(
      first,
      { reason: 'threshold', status: 'paid', subtotal: 22.5, tax: 2.38, amount: 19.88, period_start: '2026-10-01' },
      'threshold invoice 1: the amount so far, credit applied, charged at once',
    );
    t.match(first.number, /^ML-\d{4}-\d{6}$/, 'numbered when issued');
    t.same(
      first.lines.map((l: any) => [l.type, l.amount]),
      [
        ['flat', 10],
        ['usage', 12.5],
        ['tax', 2.38],
        ['credit', -5],
      ],
      'its lines: the period so far',
    );

    // 2,000 more → 3,500: 22.50 (VAT 4.275 → 4.28); not billed yet 32.50 − 22.50 + 4.28 − 2.38 = 11.90 < 15.
    await w.usage(a, calls, [{ value: 2000, timestamp: '2026-10-12T00:00:00Z' }]);
    await octoberShows(3500);
    const quiet = await runAt('2026-10-15T00:00:00Z');
    t.same(quiet.invoices, [], 'below the threshold again: nothing issued');

    // 1,200 more → 4,700: 28.50 (VAT 5.415 → 5.42); not billed 16.00 + 3.04 = 19.04 ≥ 15. A run killed mid-way,
    // then two runs at the same instant: the second threshold invoice once, charged once.
    await w.usage(a, calls, [{ value: 1200, timestamp: '2026-10-16T00:00:00Z' }]);
    await octoberShows(4700);
    const count = async () =>
      Number(
        (
          await pg.query(`SELECT count(*) AS n FROM invoices WHERE subscription_id = $1 AND reason = 'threshold'`, [
            sub.id,
          ])
        ).rows[0].n,
      );
    const killed = w.spawnRun('2026-10-20T00:00:00Z');
    await waitUntil(
      async () => (await count()) > 1 || killed.exitCode !== null,
      'the killed run to issue or end',
      60_000,
      2,
    );
    killed.kill('SIGKILL');
    await new Promise((r) =>
      killed.exitCode !== null || killed.signalCode !== null ? r(null) : killed.once('exit', r),
    );
    const [one, two] = await Promise.all([w.run('2026-10-20T00:00:00Z'), w.run('2026-10-20T00:00:00Z')]);
    t.equal(one!.code, 0, one!.stderr.slice(-2000));
    t.equal(two!.code, 0, two!.stderr.slice(-2000));
    const [, second] = await invoices();
    t.match(
      second,
      { reason: 'threshold', status: 'paid', subtotal: 16, tax: 3.04, amount: 19.04 },
      'threshold invoice 2: what was not yet billed',
    );
    t.same(
      second.lines.map((l: any) => [l.type, l.amount, l.adjusts_invoice_id ?? null]),
      [
        ['flat', 10, null],
        ['usage', 28.5, null],
        ['deduction', -22.5, first.id],
        ['tax', 3.04, null],
      ],
      'its lines: the period so far, less invoice 1',
    );
    t.equal(second.lines[2].description, `Billed on threshold invoice ${first.number}`);

    // A late record: 300 calls of 2026-10-18, arriving after invoice 2 → 5,000: 30.00 (VAT 5.70); not billed 1.78.
    await w.usage(a, calls, [{ value: 300, timestamp: '2026-10-18T00:00:00Z', id: 'late-1' }]);
    await octoberShows(5000);
    t.same((await runAt('2026-10-25T00:00:00Z')).invoices, [], '1.78 not yet billed: below the threshold');
    await runAt('2026-11-01T02:00:00Z');
    const all = await invoices();
    t.equal(all.length, 3, 'two threshold invoices and the period invoice');
    const final = all[2];
    t.match(
      final,
      { reason: 'period', status: 'paid', subtotal: 1.5, tax: 0.28, amount: 1.78, period_start: '2026-10-01' },
      'the final invoice: the period less what the threshold invoices billed',
    );
    t.same(
      final.lines.map((l: any) => [l.type, l.amount, l.adjusts_invoice_id ?? null]),
      [
        ['flat', 10, null],
        ['usage', 30, null],
        ['deduction', -22.5, first.id],
        ['deduction', -16, second.id],
        ['tax', 0.28, null],
      ],
      'one deduction line per threshold invoice',
    );
    t.equal(final.lines[4].tax_amount, 0.28, 'VAT 5.70 of the period − 2.38 − 3.04 already billed');
    for (const inv of all) t.equal(inv.amount, sum(inv.lines.map((l: any) => l.amount)), `${inv.id}: amount = Σ lines`);
    // Without a threshold: 10 + 30.00 + VAT 5.70 − credit 5 = 40.70.
    t.equal(sum(all.map((i: any) => i.amount)), 40.7, 'Σ of the invoices = what the period bills without a threshold');
    t.equal(sum(all.map((i: any) => i.tax)), 5.7, 'Σ of their tax = the tax of the whole period');

    const ids = all.map((i: any) => i.id);
    for (const inv of all) t.equal(await w.charges(inv.id), 1, `${inv.reason} invoice ${inv.number} charged once`);
    const events = await pg.query(
      `SELECT type, count(*)::int AS n, count(DISTINCT data->>'invoice_id')::int AS invoices FROM outbox_events
        WHERE data->>'invoice_id' = ANY($1) GROUP BY type ORDER BY type`,
      [ids],
    );
    t.same(
      events.rows,
      [
        { type: 'invoice.created', n: 3, invoices: 3 },
        { type: 'invoice.paid', n: 3, invoices: 3 },
      ],
      'invoice.created and invoice.paid once per invoice',
    );
    t.same(
      (
        await pg.query(`SELECT threshold_seq FROM invoices WHERE subscription_id = $1 ORDER BY created_at`, [sub.id])
      ).rows.map((r) => r.threshold_seq),
      [1, 2, null],
      'threshold invoices 1 and 2 of the period',
    );
  });

  await t.test(
    'a correction below what threshold invoices billed: the final invoice is 0, the excess credit',
    async (t) => {
      const f = await createTestAccount(w.api.infra, { name: 'Corrected Co' });
      await w.card(f);
      const calls = await w.meter(f, 'Calls', 'calls', 'counter', 'sum');
      const sub = await w.made(f.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: metered, meter_id: calls }],
        billing_threshold: { amount: 5 },
      });
      await w.backdate(sub.id, '2026-10-01T00:00:00Z');
      const october = (value: number) =>
        waitUntil(
          async () =>
            (
              await w.made(
                f.tokens.read,
                'GET',
                `/v1/meters/${calls}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
              )
            ).value === value,
          `October at ${value}`,
        );
      await w.usage(f, calls, [
        { value: 900, timestamp: '2026-10-03T00:00:00Z', id: 'keep' },
        { value: 300, timestamp: '2026-10-03T01:00:00Z', id: 'wrong' },
      ]);
      await october(1200);
      t.equal((await w.run('2026-10-05T00:00:00Z')).code, 0);
      const res = await callJson(w.api.url, f.tokens.write, 'POST', `/v1/meters/${calls}/usage/corrections`, {
        cancel: ['wrong'],
      });
      t.equal(res.status, 201, JSON.stringify(res.body));
      await october(900);
      t.equal((await w.run('2026-11-01T02:00:00Z')).code, 0);
      const list = (await w.made(f.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.sort(
        (x: any, y: any) => x.created_at.localeCompare(y.created_at),
      );
      t.match(list[0], { reason: 'threshold', amount: 12 }, '1,200 calls billed on the threshold invoice');
      t.match(list[1], { reason: 'period', status: 'paid', amount: 0 }, 'the final invoice never below zero');
      t.same(
        list[1].lines.map((l: any) => [l.type, l.amount]),
        [
          ['usage', 9],
          ['deduction', -12],
          ['credit', 3],
        ],
        '900 calls, less the 12.00 billed, the 3.00 excess returned',
      );
      const credits = await w.made(f.tokens.read, 'GET', '/v1/billing/credits');
      t.match(credits.data, [{ amount: 3, remaining: 3, currency: 'USD' }], 'as a prepaid credit grant');
      t.match(list[1].lines[2].description, credits.data[0].id, 'the line names the grant');
    },
  );

  await t.test(
    '400 subscriptions: a run killed mid-way, then two at once — each threshold invoice once, charged once',
    async (t) => {
      const g = await createTestAccount(w.api.infra, { name: 'Many Co' });
      await w.card(g);
      const subs = Array.from({ length: 400 }, () => newId('sub'));
      await pg.query(
        `INSERT INTO subscriptions (id, account_id, status, currency, created_at, billing_threshold)
       SELECT unnest($1::text[]), $2, 'active', 'USD', '2026-10-01T00:00:00Z', 5`,
        [subs, g.accountId],
      );
      await pg.query(
        `INSERT INTO subscription_items (subscription_id, position, product_id) SELECT unnest($1::text[]), 0, $2`,
        [subs, plan],
      );
      const count = async (sql: string) => Number((await pg.query(sql, [subs])).rows[0].n);
      const killed = w.spawnRun('2026-10-10T00:00:00Z');
      await waitUntil(
        async () =>
          (await count(`SELECT count(*) AS n FROM invoices WHERE subscription_id = ANY($1)`)) > 0 ||
          killed.exitCode !== null,
        'the first batch to commit',
        60_000,
        2,
      );
      killed.kill('SIGKILL');
      await new Promise((r) =>
        killed.exitCode !== null || killed.signalCode !== null ? r(null) : killed.once('exit', r),
      );
      const before = await count(`SELECT count(*) AS n FROM invoices WHERE subscription_id = ANY($1)`);
      t.comment(`killed with ${before} of ${subs.length} threshold invoices issued`);
      const [one, two] = await Promise.all([w.run('2026-10-10T00:00:00Z'), w.run('2026-10-10T00:00:00Z')]);
      t.equal(one!.code, 0, one!.stderr.slice(-2000));
      t.equal(two!.code, 0, two!.stderr.slice(-2000));
      const inv = await pg.query(
        `SELECT count(*)::int AS n, count(DISTINCT subscription_id)::int AS subs, count(*) FILTER (WHERE status = 'paid')::int AS paid,
              count(*) FILTER (WHERE attempt_count = 1)::int AS one_attempt, count(*) FILTER (WHERE threshold_seq = 1)::int AS first,
              count(DISTINCT number)::int AS numbers
         FROM invoices WHERE subscription_id = ANY($1) AND reason = 'threshold'`,
        [subs],
      );
      t.same(
        inv.rows[0],
        { n: 400, subs: 400, paid: 400, one_attempt: 400, first: 400, numbers: 400 },
        'one threshold invoice per subscription, numbered, paid at its first attempt',
      );
      t.equal(
        await count(
          `SELECT count(*) AS n FROM sandbox_charges WHERE split_part(idempotency_key, ':', 1) IN (SELECT id FROM invoices WHERE subscription_id = ANY($1))`,
        ),
        400,
        'one charge per invoice',
      );
      const events = await pg.query(
        `SELECT type, count(*)::int AS n, count(DISTINCT data->>'invoice_id')::int AS invoices FROM outbox_events
        WHERE data->>'invoice_id' IN (SELECT id FROM invoices WHERE subscription_id = ANY($1)) GROUP BY type ORDER BY type`,
        [subs],
      );
      t.same(
        events.rows,
        [
          { type: 'invoice.created', n: 400, invoices: 400 },
          { type: 'invoice.paid', n: 400, invoices: 400 },
        ],
        'invoice.created and invoice.paid once per invoice',
      );
      const again = await w.run('2026-10-20T00:00:00Z');
      t.same(
        again.json.invoices.filter((i: any) => subs.includes(i.subscription_id)),
        [],
        'the plan is billed: nothing more to issue',
      );
    },
  );

  await t.test('the upcoming invoice shows the deductions', async (t) => {
    const c = await createTestAccount(w.api.infra, { name: 'Upcoming Co' });
    await w.card(c);
    const calls = await w.meter(c, 'Calls', 'calls', 'counter', 'sum');
    const sub = await w.made(c.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: metered, meter_id: calls }],
      billing_threshold: { amount: 5 },
    });
    await w.usage(c, calls, [{ value: 700, timestamp: new Date(Date.now() - 60_000).toISOString() }]);
    const upcoming = () => w.made(c.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    await waitUntil(async () => (await upcoming()).amount === 7, 'the upcoming invoice at 7.00');
    const run = await w.run(new Date().toISOString());
    t.equal(run.code, 0, run.stderr.slice(-2000));
    const issued = run.json.invoices.filter((i: any) => i.subscription_id === sub.id);
    t.equal(issued.length, 1, '7.00 ≥ 5: a threshold invoice');
    const u = await upcoming();
    t.same(
      u.lines.map((l: any) => [l.type, l.amount, l.adjusts_invoice_id ?? null]),
      [
        ['usage', 7, null],
        ['deduction', -7, issued[0].id],
      ],
      'the period so far and what the threshold invoice billed',
    );
    t.equal(u.amount, 0, 'nothing left to bill');
    // A spend alert watches the period's whole invoiced amount: what the threshold invoice billed counts too.
    const alert = await w.made(c.tokens.write, 'POST', '/v1/alerts', {
      metric: 'amount',
      currency: 'USD',
      thresholds: [7, 8],
    });
    const deps = { ...w.api.infra, database: w.config.CLICKHOUSE_DATABASE, graceMs: 3_600_000 };
    const fired = (await evaluateAlerts(deps)).filter((x) => x.alertId === alert.id);
    t.same(
      fired.map((x) => [x.threshold, x.value]),
      [['7', '7']],
      'a spend alert sees 7.00 of spend (billed on the threshold invoice), not the 0 left to bill',
    );
  });

  await t.test('bad input → a precise problem, nothing written; PATCH sets and removes', async (t) => {
    const a = await createTestAccount(w.api.infra);
    const create = (threshold: unknown) =>
      callJson(w.api.url, a.tokens.write, 'POST', '/v1/subscriptions', {
        items: [{ product_id: plan }],
        billing_threshold: threshold,
      });
    for (const [what, threshold, message] of [
      ['zero', { amount: 0 }, /greater than 0/],
      ['negative', { amount: -5 }, /greater than 0/],
      ['more decimals than USD has', { amount: 10.123 }, /at most 2 decimal places in USD/],
      ['a string', { amount: '10' }, /number/],
      ['no amount', {}, /required/],
      ['an unknown field', { amount: 10, currency: 'USD' }, /not a known field/],
    ] as const) {
      const res = await create(threshold);
      t.equal(res.status, 422, `${what}: ${JSON.stringify(res.body)}`);
      const err = res.body.errors?.find((e: { field: string }) => e.field.startsWith('billing_threshold'));
      t.ok(err && message.test(err.message), `${what} names billing_threshold: ${JSON.stringify(res.body.errors)}`);
    }
    const list = await w.made(a.tokens.read, 'GET', '/v1/subscriptions');
    t.equal(list.data.length, 0, 'no subscription written');
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
    t.equal(sub.billing_threshold, null, 'none by default');
    const patch = (body: unknown) => callJson(w.api.url, a.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, body);
    const set = await patch({ billing_threshold: { amount: 250.5 } });
    t.equal(set.status, 200);
    t.same(set.body.billing_threshold, { amount: 250.5 }, 'set by PATCH');
    const bad = await patch({ billing_threshold: { amount: 0.001 } });
    t.equal(bad.status, 422);
    t.equal(bad.body.errors?.[0]?.field, 'billing_threshold.amount');
    const removed = await patch({ billing_threshold: null });
    t.equal(removed.status, 200);
    t.equal(removed.body.billing_threshold, null, 'null removes it');
    await patch({ status: 'canceled' });
    const canceled = await patch({ billing_threshold: { amount: 10 } });
    t.equal(canceled.status, 409, 'a canceled subscription no longer changes');
    t.equal(canceled.body.code, 'subscription_canceled');
  });

  await t.test('isolation: another account neither sees nor changes the threshold or its invoices', async (t) => {
    const a = await createTestAccount(w.api.infra);
    const b = await createTestAccount(w.api.infra);
    const sub = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: plan }],
      billing_threshold: { amount: 1 },
    });
    const run = await w.run(new Date().toISOString());
    t.equal(run.code, 0, run.stderr.slice(-2000));
    const mine = (await w.made(a.tokens.read, 'GET', '/v1/billing/invoices')).data;
    t.equal(mine.filter((i: any) => i.reason === 'threshold').length, 1, 'the flat 10.00 ≥ 1: one threshold invoice');
    const patch = await callJson(w.api.url, b.tokens.write, 'PATCH', `/v1/subscriptions/${sub.id}`, {
      billing_threshold: null,
    });
    t.equal(patch.status, 404, "another account's subscription is 404");
    const up = await callJson(
      w.api.url,
      b.tokens.read,
      'GET',
      `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`,
    );
    t.equal(up.status, 404, 'and so is its upcoming invoice');
    t.same((await w.made(b.tokens.read, 'GET', '/v1/billing/invoices')).data, [], 'no invoice of the other account');
    const inv = await callJson(w.api.url, b.tokens.read, 'GET', `/v1/billing/invoices/${mine[0].id}`);
    t.equal(inv.status, 404, "another account's threshold invoice is 404");
  });

  await t.test('a test clock: an advance evaluates the threshold at its time', async (t) => {
    const e = await createTestAccount(w.api.infra, { name: 'Clocked Co' });
    const clock = (await w.made(ADMIN, 'POST', '/v1/test_clocks', { frozen_time: '2026-11-02T00:00:00Z' })).id;
    await w.made(ADMIN, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: e.customerId });
    await w.card(e);
    const calls = await w.meter(e, 'Calls', 'calls', 'counter', 'sum');
    const sub = await w.made(e.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: metered, meter_id: calls }],
      billing_threshold: { amount: 5 },
    });
    await w.usage(e, calls, [{ value: 800, timestamp: '2026-11-03T00:00:00Z' }]);
    await waitUntil(
      async () =>
        (await w.made(e.tokens.read, 'GET', `/v1/meters/${calls}/usage?start_date=2026-11-01&end_date=2026-11-30`))
          .value === 800,
      'November at 800',
    );
    const invoices = async () =>
      (await w.made(e.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data.sort((x: any, y: any) =>
        x.created_at.localeCompare(y.created_at),
      );
    const advance = async (to: string) => {
      const r = await callJson(w.api.url, ADMIN, 'POST', `/v1/test_clocks/${clock}/advance`, { frozen_time: to });
      t.equal(r.status, 200, JSON.stringify(r.body));
    };
    await advance('2026-11-05T00:00:00Z');
    const [threshold] = await invoices();
    t.match(
      threshold,
      { reason: 'threshold', status: 'paid', amount: 8, created_at: '2026-11-05T00:00:00.000Z' },
      'issued and charged at the clock’s time',
    );
    const upcoming = await w.made(e.tokens.read, 'GET', `/v1/billing/invoices/upcoming?subscription_id=${sub.id}`);
    t.match(
      upcoming,
      { amount: 0, created_at: '2026-11-05T00:00:00.000Z' },
      'nothing left to bill at the clock’s time',
    );
    await advance('2026-12-02T00:00:00Z');
    const all = await invoices();
    t.equal(all.length, 2, 'the threshold invoice and November’s');
    t.match(all[1], { reason: 'period', status: 'paid', amount: 0 }, 'November: 8.00 − 8.00 already billed');
    t.same(
      all[1].lines.map((l: any) => [l.type, l.amount, l.adjusts_invoice_id ?? null]),
      [
        ['usage', 8, null],
        ['deduction', -8, threshold.id],
      ],
    );
  });

  await t.test('the billing role checks thresholds every few seconds: two processes, each invoice once', async (t) => {
    // Issue 49: at most one threshold invoice per subscription per BILLING_THRESHOLD_INVOICE_SPACING_SECONDS.
    const SPACING = 10;
    const env = {
      BILLING_THRESHOLD_INTERVAL_SECONDS: '1',
      BILLING_INTERVAL_SECONDS: '3600',
      BILLING_THRESHOLD_INVOICE_SPACING_SECONDS: String(SPACING),
    };
    await Promise.all([startRoleProcess(t, 'billing', w.config, env), startRoleProcess(t, 'billing', w.config, env)]);
    const d = await createTestAccount(w.api.infra, { name: 'Scheduled Co' });
    await w.card(d);
    const calls = await w.meter(d, 'Calls', 'calls', 'counter', 'sum');
    const sub = await w.made(d.tokens.write, 'POST', '/v1/subscriptions', {
      items: [{ product_id: metered, meter_id: calls }],
      billing_threshold: { amount: 3 },
    });
    const issued = async () =>
      (await w.made(d.tokens.read, 'GET', '/v1/billing/invoices?per_page=100')).data
        .filter((i: any) => i.subscription_id === sub.id)
        // In issue order: numbers are gapless and ascending; two invoices can share a created_at second.
        .sort((x: any, y: any) => x.number.localeCompare(y.number));
    const paid = (n: number) =>
      waitUntil(async () => {
        const list = await issued();
        return list.length === n && list.every((i: any) => i.status === 'paid');
      }, `${n} threshold invoice(s) paid`);
    await w.usage(d, calls, [{ value: 500, timestamp: new Date(Date.now() - 60_000).toISOString() }]);
    await paid(1);
    await w.usage(d, calls, [{ value: 400, timestamp: new Date(Date.now() - 30_000).toISOString() }]);
    await paid(2);
    const list = await issued();
    t.same(
      list.map((i: any) => [i.reason, i.amount]),
      [
        ['threshold', 5],
        ['threshold', 4],
      ],
      '5.00, then the 4.00 not yet billed',
    );
    for (const inv of list) t.equal(await w.charges(inv.id), 1, `${inv.number} charged once`);
    const apart = (Date.parse(list[1].created_at) - Date.parse(list[0].created_at)) / 1000;
    t.ok(
      apart >= SPACING - 1,
      `the second waited for the spacing though due at once (checks every second): ${apart} s apart`,
    );
  });
});
