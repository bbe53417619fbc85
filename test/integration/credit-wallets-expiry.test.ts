import t from 'tap';
import { billingWorld } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';

/**
 * Expiring credit (issue 44 item 4, docs/credits.md "Expiry") with the real api, `meterline billing run` processes
 * and Postgres: what remains of a grant at its expires_at leaves the balance once — remaining 0, one
 * credit_expirations row, one `credit.expired` — however many runs get there, at the same time or again later.
 */
t.test('credit expiry', async (t) => {
  const w = await billingWorld(t);
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const a = await createTestAccount(w.api.infra);
  const soon = new Date(Date.now() + 60_000).toISOString();
  const later = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const grant = (amount: number, expires_at?: string) =>
    w.made(admin, 'POST', '/v1/billing/credits', {
      customer_id: a.customerId,
      amount,
      currency: 'USD',
      description: 'expiry test',
      ...(expires_at ? { expires_at } : {}),
    });
  const g1 = await grant(10.25, soon);
  const g2 = await grant(5, later);
  const g3 = await grant(7);
  // A part of g1 was spent before it expired: only the remainder expires.
  await pg.query('UPDATE credit_grants SET remaining = 4.25 WHERE id = $1', [g1.id]);

  // Two runs an hour after g1's expiry, at once: one of them expires it.
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const runs = [w.spawnRun(at), w.spawnRun(at)];
  const codes = await Promise.all(runs.map((p) => new Promise<number>((res) => p.on('exit', (c) => res(c ?? 1)))));
  t.same(codes, [0, 0]);
  t.equal((await w.run(at)).code, 0, 'a third run later finds nothing left to expire');

  const rows = await pg.query(
    'SELECT id, remaining::text AS remaining FROM credit_grants WHERE account_id = $1 ORDER BY amount',
    [a.accountId],
  );
  t.same(
    rows.rows,
    [
      { id: g2.id, remaining: '5' },
      { id: g3.id, remaining: '7' },
      { id: g1.id, remaining: '0' },
    ],
    'only the expired grant left the balance',
  );
  const ledger = await pg.query(
    'SELECT grant_id, amount::text AS amount, expired_at FROM credit_expirations WHERE grant_id = ANY($1)',
    [[g1.id, g2.id, g3.id]],
  );
  t.same(ledger.rows, [{ grant_id: g1.id, amount: '4.25', expired_at: new Date(soon) }], 'one ledger entry');
  const events = await pg.query(`SELECT data FROM outbox_events WHERE account_id = $1 AND type = 'credit.expired'`, [
    a.accountId,
  ]);
  t.same(
    events.rows.map((r) => r.data),
    [
      {
        grant_id: g1.id,
        amount: 4.25,
        currency: 'USD',
        expired_at: new Date(soon).toISOString(),
        customer_id: a.customerId,
      },
    ],
    'credit.expired once',
  );
  const list = await w.made(a.tokens.read, 'GET', '/v1/billing/credits');
  t.same(list.balance, [{ currency: 'USD', amount: 12 }], 'balance = Σ grants − Σ spends − Σ expiries');
});
