import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { waitUntil } from '../fixtures/env.js';
import { newId } from '../../shared/ids.js';

/**
 * Advance invoices (docs/billing.md "Billing periods") across a `kill -9` of a billing process mid-run: once the run
 * is repeated, every yearly subscription has exactly one advance invoice for its year, charged once, its events once,
 * and has moved to its next year.
 */
t.test('advance invoices: kill -9 mid-run, then run again', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const plan = await w.product('Annual plan', 119.88, 'USD');
  const a = await createTestAccount(w.api.infra);
  await w.card(a);
  const subs = Array.from({ length: 3000 }, () => newId('sub'));
  // As POST /v1/subscriptions {interval: "year"} writes them on 2 November 2026 (set-up speed).
  await pg.query(
    `INSERT INTO subscriptions (id, account_id, status, currency, created_at, "interval", billing_period_start, billing_period_end,
                                advance_period_start, advance_period_end)
     SELECT unnest($1::text[]), $2, 'active', 'USD', '2026-11-02T00:00:00Z', 'year', '2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z',
            '2026-01-01T00:00:00Z', '2027-01-01T00:00:00Z'`,
    [subs, a.accountId],
  );
  await pg.query(
    `INSERT INTO subscription_items (subscription_id, position, product_id) SELECT unnest($1::text[]), 0, $2`,
    [subs, plan],
  );
  const count = async (sql: string) => Number((await pg.query(sql, [subs])).rows[0].n);
  const at = '2026-11-02T12:00:00Z';
  const first = w.spawnRun(at);
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
  const afterKill = await count(`SELECT count(*) AS n FROM invoices WHERE subscription_id = ANY($1)`);
  t.ok(afterKill > 0, `killed with ${afterKill} of ${subs.length} advance invoices written`);
  const again = await w.run(at);
  t.equal(again.code, 0, again.stderr);

  const inv = await pg.query(
    `SELECT count(*)::int AS n, count(DISTINCT subscription_id)::int AS subs, count(*) FILTER (WHERE status = 'paid')::int AS paid,
            count(*) FILTER (WHERE reason = 'advance' AND period_start = '2026-01-01' AND period_end = '2026-12-31' AND amount = 119.88)::int AS yearly
       FROM invoices WHERE subscription_id = ANY($1)`,
    [subs],
  );
  t.same(
    inv.rows[0],
    { n: subs.length, subs: subs.length, paid: subs.length, yearly: subs.length },
    'one advance invoice per subscription for 2026, 119.88, paid',
  );
  const charges = await pg.query(
    `SELECT count(*)::int AS n, count(DISTINCT split_part(idempotency_key, ':', 1))::int AS invoices FROM sandbox_charges
      WHERE split_part(idempotency_key, ':', 1) IN (SELECT id FROM invoices WHERE subscription_id = ANY($1))`,
    [subs],
  );
  t.same(charges.rows[0], { n: subs.length, invoices: subs.length }, 'one charge per invoice');
  const events = await pg.query(
    `SELECT type, count(*)::int AS n, count(DISTINCT data->>'invoice_id')::int AS invoices FROM outbox_events
      WHERE data->>'invoice_id' IN (SELECT id FROM invoices WHERE subscription_id = ANY($1)) GROUP BY type ORDER BY type`,
    [subs],
  );
  t.same(events.rows, [
    { type: 'invoice.created', n: subs.length, invoices: subs.length },
    { type: 'invoice.paid', n: subs.length, invoices: subs.length },
  ]);
  t.equal(
    await count(
      `SELECT count(*) AS n FROM subscriptions WHERE id = ANY($1) AND advance_period_start = '2027-01-01T00:00:00Z' AND advance_period_end = '2028-01-01T00:00:00Z'`,
    ),
    subs.length,
    'every subscription moved to 2027',
  );
  t.equal(
    await count(
      `SELECT count(*) AS n FROM subscriptions WHERE id = ANY($1) AND billing_period_start = '2026-11-01T00:00:00Z'`,
    ),
    subs.length,
    'the usage month is not due yet',
  );
});
