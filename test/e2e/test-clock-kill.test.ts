import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';
import { startRoleProcess } from '../fixtures/role-process.js';

/**
 * A test clock's advance is safe to crash and repeat (docs/test-clocks.md): the api process running it is killed
 * (SIGKILL) half-way through a year of periods for 30 customers; the clock is left `advancing` at its last finished
 * step; the same advance sent to a new api process finishes it, and every customer has exactly one invoice per
 * period, each paid by exactly one charge in the sandbox processor's ledger.
 */
const CUSTOMERS = 30;
const PERIODS = 12;

t.test('an advance killed half-way and sent again: one invoice per period, one charge per invoice', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const plan = await w.product('Team plan', 20, 'USD');
  const clock = (await w.made(admin, 'POST', '/v1/test_clocks', { frozen_time: '2026-01-15T00:00:00Z' })).id;
  for (let i = 0; i < CUSTOMERS; i++) {
    const c = await createTestAccount(w.api.infra);
    await w.made(admin, 'POST', `/v1/test_clocks/${clock}/customers`, { customer_id: c.customerId });
    await w.card(c);
    await w.made(c.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
  }
  const count = async (sql: string) => Number((await pg.query(sql)).rows[0].n);
  const target = '2027-01-02T00:00:00Z';

  const first = await startRoleProcess(t, 'api', w.config);
  const apiUrl = first.metricsUrl.replace(/\/metrics$/, '');
  const killed = callJson(apiUrl, admin, 'POST', `/v1/test_clocks/${clock}/advance`, { frozen_time: target }).catch(
    (err: Error) => err,
  );
  await waitUntil(
    async () => (await count('SELECT count(*)::int AS n FROM invoices')) >= CUSTOMERS * 3,
    'the advance to have closed a few periods',
    120_000,
    20,
  );
  first.child.kill('SIGKILL');
  t.ok((await killed) instanceof Error, 'the killed advance got no answer');
  const invoicesAtKill = await count('SELECT count(*)::int AS n FROM invoices');
  t.ok(invoicesAtKill < CUSTOMERS * PERIODS, `killed half-way (${invoicesAtKill} invoices)`);
  const left = (await pg.query('SELECT status, frozen_time FROM test_clocks WHERE id = $1', [clock])).rows[0];
  t.equal(left.status, 'advancing', 'the clock says it did not finish');
  t.ok(
    left.frozen_time.getTime() < Date.parse(target),
    `it stands at its last finished step (${left.frozen_time.toISOString()})`,
  );

  const second = await startRoleProcess(t, 'api', w.config);
  const again = await callJson(
    second.metricsUrl.replace(/\/metrics$/, ''),
    admin,
    'POST',
    `/v1/test_clocks/${clock}/advance`,
    {
      frozen_time: target,
    },
  );
  t.equal(again.status, 200, `the repeated advance finishes: ${JSON.stringify(again.body).slice(0, 300)}`);
  t.match(again.body, { frozen_time: '2027-01-02T00:00:00.000Z', status: 'ready' });

  const perCustomer = await pg.query(
    `SELECT customer_id, count(*)::int AS n, count(DISTINCT period_start)::int AS periods, bool_and(status = 'paid') AS paid
       FROM invoices GROUP BY customer_id`,
  );
  t.equal(perCustomer.rows.length, CUSTOMERS, 'every customer was billed');
  t.same(
    perCustomer.rows.filter((r) => r.n !== PERIODS || r.periods !== PERIODS || !r.paid),
    [],
    `each customer: ${PERIODS} invoices, one per period, all paid`,
  );
  t.equal(
    await count(`SELECT count(*)::int AS n FROM sandbox_charges`),
    CUSTOMERS * PERIODS,
    'one charge per invoice in the processor’s ledger',
  );
  t.equal(
    await count(
      `SELECT count(*)::int AS n FROM invoices i WHERE (SELECT count(*) FROM payment_attempts a WHERE a.invoice_id = i.id) <> 1`,
    ),
    0,
    'one attempt per invoice',
  );
});
