import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';

/**
 * Auto-recharge and the low-balance alert (issue 44 item 4, docs/credits.md) with the real api, `meterline billing
 * run` processes (the sandbox processor) and Postgres: below the threshold the run buys the set amount — once under
 * concurrent runs, at most max_per_month a month; `credit.balance_low` once per dip; a failure shows on the settings.
 */
t.test('auto-recharge', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const a = await createTestAccount(w.api.infra);
  await w.card(a);
  await w.made(admin, 'POST', '/v1/billing/credits', {
    customer_id: a.customerId,
    amount: 3,
    currency: 'USD',
    description: 'start',
  });
  const settings = await w.made(admin, 'PUT', '/v1/credit_settings', {
    customer_id: a.customerId,
    currency: 'USD',
    auto_recharge: { enabled: true, threshold: 10, amount: 20, max_per_month: 2 },
    low_balance_threshold: 5,
  });
  t.match(settings, {
    customer_id: a.customerId,
    balance: 3,
    auto_recharge: { threshold: 10, amount: 20, max_per_month: 2, top_ups_this_month: 0, last_failure: null },
    low_balance_threshold: 5,
  });
  const now = new Date().toISOString();
  const exits = await Promise.all(
    [w.spawnRun(now), w.spawnRun(now), w.spawnRun(now)].map(
      (p) => new Promise<number>((res) => p.on('exit', (c) => res(c ?? 1))),
    ),
  );
  t.same(exits, [0, 0, 0]);
  const topUps = await pg.query(
    `SELECT amount::text AS amount, status, trigger FROM credit_top_ups WHERE account_id = $1`,
    [a.accountId],
  );
  t.same(topUps.rows, [{ amount: '20', status: 'paid', trigger: 'auto_recharge' }], 'three runs at once buy once');
  const low = await pg.query(`SELECT data FROM outbox_events WHERE account_id = $1 AND type = 'credit.balance_low'`, [
    a.accountId,
  ]);
  t.same(
    low.rows.map((r) => r.data),
    [{ currency: 'USD', balance: 3, threshold: 5, customer_id: a.customerId }],
    'credit.balance_low once',
  );
  let s = await w.made(a.tokens.read, 'GET', '/v1/credit_settings');
  t.match(s, { balance: 23, auto_recharge: { top_ups_this_month: 1, in_flight: false } });

  // Spent down twice more: the second dip hits the monthly cap (2).
  const spend = async (amount: string) =>
    pg.query(
      `UPDATE credit_grants SET remaining = 0 WHERE account_id = $1;
       UPDATE credit_grants SET remaining = ${amount} WHERE id = (SELECT id FROM credit_grants WHERE account_id = '${a.accountId}' ORDER BY created_at DESC LIMIT 1)`.replace(
        '$1',
        `'${a.accountId}'`,
      ),
    );
  await spend('1');
  t.equal((await w.run(now)).code, 0);
  await spend('1');
  t.equal((await w.run(now)).code, 0);
  s = await w.made(a.tokens.read, 'GET', '/v1/credit_settings');
  t.match(s, { balance: 1, auto_recharge: { top_ups_this_month: 2 } }, 'at most max_per_month');
  t.equal(
    (await pg.query(`SELECT count(*)::int AS n FROM credit_top_ups WHERE account_id = $1`, [a.accountId])).rows[0].n,
    2,
  );

  // A declined card: the failure shows on the settings, and the run does not buy again until they are saved.
  const b = await createTestAccount(w.api.infra);
  await w.card(b, '4000000000009995');
  await w.made(admin, 'PUT', '/v1/credit_settings', {
    customer_id: b.customerId,
    currency: 'USD',
    auto_recharge: { enabled: true, threshold: 10, amount: 20, max_per_month: 5 },
    low_balance_threshold: null,
  });
  t.equal((await w.run(now)).code, 0);
  t.equal((await w.run(now)).code, 0);
  s = await w.made(admin, 'GET', `/v1/credit_settings?customer_id=${b.customerId}`);
  t.match(s, { balance: 0, auto_recharge: { top_ups_this_month: 1, last_failure: { code: 'insufficient_funds' } } });
  const failed = await pg.query(
    `SELECT data FROM outbox_events WHERE account_id = $1 AND type = 'credit.top_up.failed'`,
    [b.accountId],
  );
  t.equal(failed.rows.length, 1);
  t.match(failed.rows[0].data, { trigger: 'auto_recharge', failure_code: 'insufficient_funds', amount: 20 });
});
