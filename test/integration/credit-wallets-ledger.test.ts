import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { insertInvoice } from '../fixtures/invoices.js';
import { withTransaction } from '../../shared/clients/postgres.js';
import { allocateCredits, lockCredits, recordCreditUses } from '../../services/domain/billing/credits.js';
import { insertCreditGrant } from '../../services/domain/credits/store.js';

type Op = { kind: 'grant'; amount: Decimal } | { kind: 'spend'; amount: Decimal };

/** A small seeded generator: a failure names its seed and replays exactly. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The prepaid credit ledger under concurrent spends and grants (issue 44 item 4), against a reference kept by the
 * test: every spend runs the billing engine's own steps (lock the grants, allocate, write the uses back) in its own
 * transaction, every grant the operator's own insert, 24 of them at once, over five seeds. Afterwards, per grant:
 * remaining = amount − Σ its applications, never below 0; no spend took more than it asked; Σ granted − Σ spent =
 * Σ remaining to the cent; Σ spent ≤ min(Σ asked, Σ granted); and when no spend went short, every spend was paid in
 * full, exactly once (no credit spent twice, none lost).
 */
t.test('the credit ledger stays exact under concurrent spends and grants', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const pg = api.infra.pg;
  const acct = await createTestAccount(api.infra);
  const W = acct.tokens.write;
  const operator = await createTestAccount(api.infra, { operator: true });
  const madeProduct = await callJson(api.url, operator.tokens.admin, 'POST', '/v1/products', {
    name: 'Seat',
    price: 1,
    currency: 'USD',
  });
  t.equal(madeProduct.status, 201);
  const product = madeProduct.body;
  const made = await callJson(api.url, W, 'POST', '/v1/subscriptions', { items: [{ product_id: product.id }] });
  t.equal(made.status, 201);
  const sub = made.body;
  const customerId = (await pg.query('SELECT customer_id FROM accounts WHERE id = $1', [acct.accountId])).rows[0]
    .customer_id as string;

  // Invoices are one per subscription and period: each spend gets a day of its own.
  let day = 0;
  const period = () => {
    const start = new Date(Date.UTC(2020, 0, 1) + 86_400_000 * day++).toISOString().slice(0, 10);
    return { periodStart: start, periodEnd: start };
  };

  for (const seed of [1, 2, 3, 4, 5]) {
    const next = rng(seed);
    const cents = (max: number) => new Decimal(1 + Math.floor(next() * max)).div(100);
    // Each round starts from a spent-out ledger, so the reference starts at 0.
    await withTransaction(pg, async (c) => {
      const grants = await lockCredits(c, [acct.accountId], new Date());
      const all = grants.reduce((s, g) => s.plus(g.remaining), new Decimal(0));
      if (all.gt(0)) {
        const id = await insertInvoice(pg, {
          accountId: acct.accountId,
          customerId,
          subscriptionId: sub.id,
          amount: all.toFixed(2),
          ...period(),
        });
        const uses = allocateCredits(grants, [
          {
            invoice_id: id,
            account_id: acct.accountId,
            priced: { amount: all.toFixed(2), currency: 'USD', lines: [] } as never,
          },
        ]);
        await recordCreditUses(c, uses);
      }
    });
    const ops: Op[] = Array.from({ length: 24 }, () =>
      next() < 0.4 ? { kind: 'grant', amount: cents(5_000) } : { kind: 'spend', amount: cents(4_000) },
    );
    const invoices = await Promise.all(
      ops.map((op) =>
        op.kind === 'spend'
          ? insertInvoice(pg, {
              accountId: acct.accountId,
              customerId,
              subscriptionId: sub.id,
              amount: op.amount.toFixed(2),
              ...period(),
            })
          : Promise.resolve(null),
      ),
    );
    const grantIds: string[] = [];
    await Promise.all(
      ops.map(async (op, i) => {
        if (op.kind === 'grant') {
          const g = await insertCreditGrant(pg, {
            accountId: acct.accountId,
            currency: 'USD',
            amount: op.amount.toFixed(2),
            expiresAt: next() < 0.5 ? new Date(Date.now() + 86_400_000 * (1 + i)) : null,
            description: `round ${seed} grant ${i}`,
          });
          grantIds.push(g.id);
          return;
        }
        await withTransaction(pg, async (c) => {
          const grants = await lockCredits(c, [acct.accountId], new Date());
          const priced = { amount: op.amount.toFixed(2), currency: 'USD', lines: [] };
          const uses = allocateCredits(grants, [
            { invoice_id: invoices[i]!, account_id: acct.accountId, priced: priced as never },
          ]);
          await recordCreditUses(c, uses);
        });
      }),
    );

    const grants = (
      await pg.query<{ id: string; amount: string; remaining: string }>(
        'SELECT id, amount::text, remaining::text FROM credit_grants WHERE id = ANY($1)',
        [grantIds],
      )
    ).rows;
    const applied = (
      await pg.query<{ grant_id: string; invoice_id: string; amount: string }>(
        'SELECT grant_id, invoice_id, amount::text FROM credit_applications WHERE invoice_id = ANY($1)',
        [invoices.filter(Boolean)],
      )
    ).rows;
    let ok = true;
    for (const g of grants) {
      const spent = applied.filter((a) => a.grant_id === g.id).reduce((s, a) => s.plus(a.amount), new Decimal(0));
      if (!new Decimal(g.amount).minus(spent).eq(g.remaining) || new Decimal(g.remaining).lt(0)) ok = false;
    }
    t.ok(ok, `seed ${seed}: every grant's remaining = amount − its applications, never below 0`);
    for (const [i, op] of ops.entries()) {
      if (op.kind !== 'spend') continue;
      const took = applied
        .filter((a) => a.invoice_id === invoices[i])
        .reduce((s, a) => s.plus(a.amount), new Decimal(0));
      if (took.gt(op.amount)) ok = false;
    }
    t.ok(ok, `seed ${seed}: no spend took more than it asked`);
    const granted = grants.reduce((s, g) => s.plus(g.amount), new Decimal(0));
    const remaining = grants.reduce((s, g) => s.plus(g.remaining), new Decimal(0));
    const spent = applied.reduce((s, a) => s.plus(a.amount), new Decimal(0));
    const asked = ops.reduce((s, op) => (op.kind === 'spend' ? s.plus(op.amount) : s), new Decimal(0));
    t.equal(granted.minus(spent).toFixed(2), remaining.toFixed(2), `seed ${seed}: Σ granted − Σ spent = Σ remaining`);
    // Spends are serialized by the grants' row locks: credit is left only if every spend was paid in full by then,
    // or the grants left were committed after the spends that went short.
    t.ok(spent.lte(Decimal.min(asked, granted)), `seed ${seed}: Σ spent ≤ min(Σ asked, Σ granted)`);
    const short = ops.some((op, i) => {
      if (op.kind !== 'spend') return false;
      const took = applied
        .filter((a) => a.invoice_id === invoices[i])
        .reduce((s, a) => s.plus(a.amount), new Decimal(0));
      return took.lt(op.amount);
    });
    if (!short) t.equal(spent.toFixed(2), asked.toFixed(2), `seed ${seed}: every spend paid in full, exactly once`);
  }
});
