import t, { type Test } from 'tap';
import { billingWorld, type BillingWorld, work } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { newId } from '../../shared/ids.js';
import { after, billingDay, dayOf, NEXT_MONTH, THIS_MONTH } from '../fixtures/calendar.js';

/**
 * One invoice per subscription and period, one charge per attempt, each event once — with two billing
 * processes started at the same instant, and across a `kill -9` of a billing process mid-run.
 */

/** `n` subscriptions of the account (rows written as POST /v1/subscriptions writes them; set-up speed). */
async function subscriptions(
  w: BillingWorld,
  account: TestAccount,
  n: number,
  items: { product_id: string; meter_id?: string }[],
): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId('sub'));
  await w.api.infra.pg.query(
    `INSERT INTO subscriptions (id, account_id, status, currency, created_at) SELECT unnest($1::text[]), $2, 'active', 'USD', $3`,
    [ids, account.accountId, after(THIS_MONTH, 1)],
  );
  await w.api.infra.pg.query(
    `INSERT INTO subscription_items (subscription_id, position, product_id, meter_id)
     SELECT s.id, i.pos - 1, i.product_id, i.meter_id FROM unnest($1::text[]) AS s(id), unnest($2::text[], $3::text[]) WITH ORDINALITY AS i(product_id, meter_id, pos)`,
    [ids, items.map((i) => i.product_id), items.map((i) => i.meter_id ?? null)],
  );
  return ids;
}

/** The invariants: every subscription exactly one invoice for this month, paid by exactly one charge, events once. */
async function checkInvariants(t: Test, w: BillingWorld, subs: string[], label: string): Promise<void> {
  const pg = w.api.infra.pg;
  const inv = await pg.query(
    `SELECT count(*)::int AS n, count(DISTINCT subscription_id)::int AS subs, count(*) FILTER (WHERE status = 'paid')::int AS paid,
            count(*) FILTER (WHERE attempt_count = 1)::int AS one_attempt
       FROM invoices WHERE subscription_id = ANY($1) AND period_start = $2`,
    [subs, dayOf(THIS_MONTH)],
  );
  t.same(
    inv.rows[0],
    { n: subs.length, subs: subs.length, paid: subs.length, one_attempt: subs.length },
    `${label}: one invoice per subscription, each paid at its first attempt`,
  );
  const charges = await pg.query(
    `SELECT count(*)::int AS n, count(DISTINCT split_part(idempotency_key, ':', 1))::int AS invoices FROM sandbox_charges c
      WHERE split_part(idempotency_key, ':', 1) IN (SELECT id FROM invoices WHERE subscription_id = ANY($1))`,
    [subs],
  );
  t.same(charges.rows[0], { n: subs.length, invoices: subs.length }, `${label}: one charge per invoice`);
  const events = await pg.query(
    `SELECT type, count(*)::int AS n, count(DISTINCT data->>'invoice_id')::int AS invoices FROM outbox_events
      WHERE data->>'invoice_id' IN (SELECT id FROM invoices WHERE subscription_id = ANY($1)) GROUP BY type ORDER BY type`,
    [subs],
  );
  t.same(
    events.rows,
    [
      { type: 'invoice.created', n: subs.length, invoices: subs.length },
      { type: 'invoice.paid', n: subs.length, invoices: subs.length },
    ],
    `${label}: invoice.created and invoice.paid once per invoice`,
  );
  const pending = await pg.query(`SELECT count(*)::int AS n FROM payment_attempts WHERE status = 'pending'`);
  t.equal(pending.rows[0].n, 0, `${label}: no attempt left pending`);
  const moved = await pg.query(
    `SELECT count(*)::int AS n FROM subscriptions WHERE id = ANY($1) AND billing_period_start = $2`,
    [subs, NEXT_MONTH],
  );
  t.equal(moved.rows[0].n, subs.length, `${label}: every subscription moved to the next month`);
}

t.test('concurrent runs and crashes', async (t) => {
  const w = await billingWorld(t);
  const plan = await w.product('Plan', 9.99, 'USD');
  const callsP = await w.product('Calls', 0.002, 'USD', 'metered');

  await t.test('two billing runs started at the same instant: one invoice and one charge each', async (t) => {
    const a = await createTestAccount(w.api.infra);
    await w.card(a);
    const meter = await w.meter(a, 'calls', 'calls', 'counter', 'sum');
    await w.usage(a, meter, [{ value: 1234, timestamp: new Date(Date.now() - 60_000).toISOString() }]);
    const subs = await subscriptions(w, a, 300, [{ product_id: plan }, { product_id: callsP, meter_id: meter }]);
    const [one, two] = await Promise.all([w.run(billingDay(0)), w.run(billingDay(0))]);
    t.equal(one!.code, 0, one!.stderr);
    t.equal(two!.code, 0, two!.stderr);
    const printed = [...one!.json.invoices, ...two!.json.invoices].map((i: any) => i.subscription_id).sort();
    t.same(printed, [...subs].sort(), 'the two runs together printed each subscription once');
    await checkInvariants(t, w, subs, 'two runs');
    const amount = (
      await w.api.infra.pg.query(`SELECT DISTINCT amount::text FROM invoices WHERE subscription_id = ANY($1)`, [subs])
    ).rows;
    t.same(amount, [{ amount: '12.46' }], '9.99 + 1,234 × 0.002 = 12.458 → 12.46');
  });

  await t.test('kill -9 mid-run, then run again: nothing missing, nothing doubled, no second charge', async (t) => {
    const b = await createTestAccount(w.api.infra);
    await w.card(b);
    const subs = await subscriptions(w, b, 3000, [{ product_id: plan }]);
    const pg = w.api.infra.pg;
    const count = async (sql: string) => Number((await pg.query(sql, [subs])).rows[0].n);
    // Killed once invoices are committed but before the run is through …
    const first = w.spawnRun(billingDay(0));
    await waitUntil(
      async () =>
        (await count(`SELECT count(*) AS n FROM invoices WHERE subscription_id = ANY($1)`)) > 0 ||
        first.exitCode !== null,
      'the first batch to commit',
      60_000,
      5,
    );
    first.kill('SIGKILL');
    await new Promise((r) => (first.exitCode !== null || first.signalCode !== null ? r(null) : first.once('exit', r)));
    const afterFirst = await count(`SELECT count(*) AS n FROM invoices WHERE subscription_id = ANY($1)`);
    t.ok(afterFirst > 0, `killed with ${afterFirst} of ${subs.length} invoices written`);
    // … and once payment attempts are recorded (some charged, their completion not yet written).
    const second = w.spawnRun(billingDay(0));
    await waitUntil(
      async () =>
        (await count(
          `SELECT count(*) AS n FROM payment_attempts pa JOIN invoices i ON i.id = pa.invoice_id WHERE i.subscription_id = ANY($1)`,
        )) > 0 || second.exitCode !== null,
      'payment attempts to be recorded',
      60_000,
      5,
    );
    second.kill('SIGKILL');
    await new Promise((r) =>
      second.exitCode !== null || second.signalCode !== null ? r(null) : second.once('exit', r),
    );
    const third = await w.run(billingDay(0));
    t.equal(third.code, 0, third.stderr);
    await checkInvariants(t, w, subs, 'after two kills');
    const rerun = await w.run(billingDay(0));
    t.same(work(rerun.json), { invoices: [], payments: [] }, 'a further run finds nothing to do');
  });
});
