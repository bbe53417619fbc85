import { readFileSync } from 'node:fs';
import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { repoPath } from '../../shared/paths.js';
import { EXPORT_COLUMNS } from '../../services/domain/exports/columns.js';
import { localPathProblem, objectKey, objectName } from '../../services/domain/exports/destinations.js';
import { journalLines, type JournalDocument } from '../../services/domain/exports/journal.js';
import { dueWindows } from '../../services/domain/exports/schedules.js';
import { forAll, type Seeded } from './seeded.js';

// Exports' rules without a server (docs/exports.md): journal entries balance per document, the documented columns
// are the written ones, a local path stays inside the root, object names, schedule windows.

const amount = (g: Seeded, negative = false) => {
  const v = g.decimal(7, 2);
  return negative && g.bool(0.2) && v !== '0' ? `-${v}` : v;
};
/** Tax inside an amount: none, or a share of it to the cent (as a document carries it). */
const taxOf = (g: Seeded, total: string) =>
  g.bool(0.3)
    ? '0'
    : new Decimal(total)
        .abs()
        .mul(g.pick(['0.07', '0.2', '0.25']))
        .toDecimalPlaces(2)
        .toFixed();

function document(g: Seeded): JournalDocument {
  const base = { id: `doc_${g.int(1, 1e6)}`, customerId: 'cus_x', currency: 'USD', at: new Date(0) };
  switch (g.pick(['invoice', 'payment', 'credit_note', 'refund'] as const)) {
    case 'invoice': {
      const total = amount(g, true);
      return {
        ...base,
        type: 'invoice',
        number: 'ML-1',
        amount: total,
        tax: taxOf(g, total),
        creditApplied: g.bool() ? amount(g) : '0',
      };
    }
    case 'payment':
      return { ...base, type: 'payment', amount: amount(g) };
    case 'credit_note': {
      const total = amount(g);
      return { ...base, type: 'credit_note', number: 'ML-2', amount: total, tax: taxOf(g, total) };
    }
    case 'refund':
      return { ...base, type: 'refund', number: 'ML-2', amount: amount(g) };
  }
}

t.test('every document’s journal lines balance to zero, exactly, with non-negative sides', async (t) => {
  const failures = forAll(20261128, 2000, document, (d) => {
    const lines = journalLines(d);
    let debit = new Decimal(0);
    let credit = new Decimal(0);
    for (const l of lines) {
      const dr = new Decimal(l.debit as string);
      const cr = new Decimal(l.credit as string);
      if (dr.lt(0) || cr.lt(0)) return `negative side in ${l.entry_id}`;
      if (dr.isZero() === cr.isZero()) return `${l.entry_id} must post exactly one side`;
      debit = debit.plus(dr);
      credit = credit.plus(cr);
    }
    if (!debit.eq(credit)) return `debits ${debit} ≠ credits ${credit}`;
    if (d.type !== 'invoice' && !debit.eq(new Decimal(d.amount).abs())) return `moves ${debit}, not ${d.amount}`;
    return null;
  });
  t.same(failures, []);
});

t.test('an invoice: receivable, prepaid credit, revenue net of tax, tax payable', async (t) => {
  const lines = journalLines({
    type: 'invoice',
    id: 'inv_1',
    number: 'ML-2026-000001',
    customerId: 'cus_1',
    currency: 'EUR',
    amount: '110.00',
    tax: '20.00',
    creditApplied: '10',
    at: new Date('2026-11-01T00:00:00Z'),
  });
  t.same(
    lines.map((l) => [l.ledger_account, l.debit, l.credit]),
    [
      ['accounts_receivable', '110', '0'],
      ['customer_credit', '10', '0'],
      ['revenue', '0', '100'],
      ['tax_payable', '0', '20'],
    ],
  );
  t.same(
    lines.map((l) => l.entry_id),
    ['invoice:inv_1:1', 'invoice:inv_1:2', 'invoice:inv_1:3', 'invoice:inv_1:4'],
  );
});

t.test('docs/exports.md lists every column of every kind, in order', async (t) => {
  const doc = readFileSync(repoPath('docs/exports.md'), 'utf8');
  for (const [kind, columns] of Object.entries(EXPORT_COLUMNS)) {
    const row = doc.split('\n').find((l) => l.startsWith(`| \`${kind}\` |`));
    t.ok(row, `${kind} has a row`);
    const named = [...(row ?? '').split('|')[2]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    t.same(
      named,
      columns.map((c) => c.name),
      `${kind}: the columns as written`,
    );
  }
});

t.test('a local destination stays below EXPORTS_LOCAL_ROOT', async (t) => {
  for (const ok of ['', 'a', 'a/b/c', 'finance/2026']) t.equal(localPathProblem(ok), null, ok);
  for (const bad of ['/etc', '../x', 'a/../../b', 'a/.hidden', '.', '..', 'a\\b', 'a\0b'])
    if (bad !== '.') t.not(localPathProblem(bad), null, bad);
});

t.test('object names: kind, window in basic ISO 8601, format; under the path or prefix', async (t) => {
  const name = objectName('usage', new Date('2026-10-01T00:00:00Z'), new Date('2026-10-02T00:00:00Z'), 'parquet');
  t.equal(name, 'usage/usage_20261001T000000Z_20261002T000000Z.parquet');
  t.equal(objectKey({ type: 's3', bucket: 'b', prefix: 'p/q/' }, name), `p/q/${name}`);
  t.equal(objectKey({ type: 'local', path: '' }, name), name);
});

t.test('schedule windows: whole, ended and settled, at most 48 a pass', async (t) => {
  const iso = (ws: { from: Date; to: Date }[]) => ws.map((w) => w.from.toISOString());
  const start = new Date('2026-10-01T00:00:00Z');
  t.same(iso(dueWindows(start, 'daily', new Date('2026-10-03T00:04:59Z'), 300_000)), ['2026-10-01T00:00:00.000Z']);
  t.same(iso(dueWindows(start, 'daily', new Date('2026-10-03T00:05:00Z'), 300_000)), [
    '2026-10-01T00:00:00.000Z',
    '2026-10-02T00:00:00.000Z',
  ]);
  t.equal(dueWindows(start, 'hourly', new Date('2026-11-01T00:00:00Z'), 0).length, 48);
});
