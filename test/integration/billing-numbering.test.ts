import t from 'tap';
import type { ChildProcess } from 'node:child_process';
import { billingWorld, type BillingWorld } from '../fixtures/billing.js';
import { createTestAccount, type TestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { waitUntil } from '../fixtures/env.js';
import { newId } from '../../shared/ids.js';

/**
 * Issue 31, numbering: every finalized invoice and every credit note takes the next number of ONE gapless series
 * per deployment (services/domain/invoices/numbering.ts, migration 625) — with two billing processes closing at
 * once, one of them killed with SIGKILL mid-run, and credit notes issued through the api while they close: the
 * numbers are exactly 1…N, none missing, none twice, and the api prints each with INVOICE_NUMBER_PREFIX.
 */

const CLOSES = 3000;

/** `n` subscriptions of the account on one flat plan (rows as POST /v1/subscriptions writes them; set-up speed). */
async function subscriptions(w: BillingWorld, account: TestAccount, n: number, productId: string): Promise<string[]> {
  const ids = Array.from({ length: n }, () => newId('sub'));
  await w.api.infra.pg.query(
    `INSERT INTO subscriptions (id, account_id, status, currency, created_at) SELECT unnest($1::text[]), $2, 'active', 'USD', '2026-11-02T00:00:00Z'`,
    [ids, account.accountId],
  );
  await w.api.infra.pg.query(
    `INSERT INTO subscription_items (subscription_id, position, product_id) SELECT unnest($1::text[]), 0, $2`,
    [ids, productId],
  );
  return ids;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', resolve),
  );

t.test('gapless numbers under two billing processes, a kill -9 and concurrent credit notes', async (t) => {
  const w = await billingWorld(t, { INVOICE_NUMBER_PREFIX: 'ML-{YYYY}-' });
  const pg = w.api.infra.pg;
  const plan = await w.product('Plan', 9.99, 'USD');
  const a = await createTestAccount(w.api.infra);
  await w.card(a);
  const subs = await subscriptions(w, a, CLOSES, plan);
  const invoicesWritten = async () =>
    Number(
      (await pg.query(`SELECT count(*)::int AS n FROM invoices WHERE subscription_id = ANY($1)`, [subs])).rows[0].n,
    );

  // Two billing processes at the same instant; one is killed once the first batches committed, mid-run.
  const now = '2026-12-01T01:00:00Z';
  const killed = w.spawnRun(now);
  const survivor = w.run(now);
  await waitUntil(
    async () => (await invoicesWritten()) > 0 || killed.exitCode !== null,
    'the first batch to commit',
    60_000,
    5,
  );
  killed.kill('SIGKILL');
  await exited(killed);
  const atKill = await invoicesWritten();
  t.ok(atKill < CLOSES, `killed mid-run: ${atKill} of ${CLOSES} invoices written`);

  // Meanwhile an operator refunds part of paid invoices: credit notes take numbers of the same series.
  const notes: string[] = [];
  const conflicts: string[] = [];
  const credited = new Set<string>();
  for (let round = 0; notes.length < 40 && round < 400; round++) {
    const paid = await pg.query<{ id: string }>(
      `SELECT id FROM invoices WHERE subscription_id = ANY($1) AND status = 'paid' AND NOT (id = ANY($2)) LIMIT 8`,
      [subs, [...credited]],
    );
    if (paid.rows.length === 0) {
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    await Promise.all(
      paid.rows.map(async ({ id }) => {
        credited.add(id);
        const r = await callJson(
          w.api.url,
          w.operator.tokens.admin,
          'POST',
          `/v1/billing/invoices/${id}/credit-notes`,
          {
            amount: 1.5,
            reason: 'numbering test',
          },
        );
        if (r.status === 201) notes.push(r.body.id);
        else conflicts.push(`${r.status} ${r.body.code}`);
      }),
    );
  }
  t.equal(notes.length, 40, `40 credit notes issued while the billing run went on (refused: ${conflicts.join(', ')})`);

  const done = await survivor;
  t.equal(done.code, 0, done.stderr);
  // Whatever the killed process held is closed by a later run, as the billing role's next tick would.
  const rerun = await w.run(now);
  t.equal(rerun.code, 0, rerun.stderr);
  t.equal(await invoicesWritten(), CLOSES, 'every subscription invoiced once');

  await t.test('the numbers are exactly 1…N: none missing, none twice, credit notes included', async (t) => {
    const docs = await pg.query<{ kind: string; number: string | null }>(
      `SELECT 'invoice' AS kind, number::text AS number FROM invoices
       UNION ALL SELECT 'credit_note', number::text FROM credit_notes`,
    );
    const numbers = docs.rows.map((r) => Number(r.number)).sort((x, y) => x - y);
    t.equal(docs.rows.filter((r) => r.number === null).length, 0, 'every finalized document is numbered');
    const last = Number((await pg.query(`SELECT last FROM document_numbers`)).rows[0].last);
    t.equal(numbers.length, CLOSES + notes.length, `${CLOSES} invoices and ${notes.length} credit notes`);
    t.equal(last, numbers.length, 'the counter stands at the number of documents');
    const expected = Array.from({ length: numbers.length }, (_, i) => i + 1);
    const firstOff = numbers.findIndex((n, i) => n !== expected[i]);
    t.equal(
      firstOff,
      -1,
      firstOff < 0 ? '1…N exactly' : `first gap or repeat at position ${firstOff}: ${numbers[firstOff]}`,
    );
  });

  await t.test('the api prints the number with the prefix, for invoices and credit notes', async (t) => {
    const [{ id: invoiceId, number }] = (
      await pg.query(`SELECT id, number::text AS number FROM invoices WHERE subscription_id = $1`, [subs[0]])
    ).rows;
    const invoice = await w.made(a.tokens.read, 'GET', `/v1/billing/invoices/${invoiceId}`);
    const year = (o: { created_at: string }) => o.created_at.slice(0, 4);
    t.equal(invoice.number, `ML-${year(invoice)}-${number.padStart(6, '0')}`, 'ML-, the year of issue and six digits');
    const note = await w.made(a.tokens.read, 'GET', `/v1/billing/credit-notes/${notes[0]}`);
    const noteNumber = (await pg.query(`SELECT number::text AS n FROM credit_notes WHERE id = $1`, [notes[0]])).rows[0]
      .n;
    t.equal(note.number, `ML-${year(note)}-${noteNumber.padStart(6, '0')}`);
    t.notOk(
      (await pg.query(`SELECT 1 FROM invoices WHERE number = $1`, [noteNumber])).rows.length,
      'no invoice has a credit note’s number',
    );
  });
});
