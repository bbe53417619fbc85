import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import type { WindowStats } from '../../services/domain/usage/stats.js';
import { priceInvoice, type ItemToPrice } from '../../services/domain/pricing/invoice-lines.js';
import type { DimensionPrices } from '../../services/domain/pricing/dimension-prices.js';
import type { PriceModel } from '../../services/domain/pricing/price-models.js';
import { groupAdjustments } from '../../services/domain/billing/group-adjustments.js';
import { type Seeded, forAll } from './seeded.js';
import { decimalQ, fromMinor, referencePrice, toMinor, type RefModel } from './money-reference.js';

// Per-dimension prices (issue 46) as properties, against the BigInt reference (test/unit/money-reference.ts
// referencePrice): random items priced by a dimension's value — some values with a price, some without, records
// without the dimension — in JPY, USD and KWD. Every value present is one line (never dropped); each line's amount is
// its value's model (or default_price) on its quantity alone, rounded once; an unpriced value is 0; the invoice
// amount is Σ lines. Late usage of a billed period re-prices each value at that period's prices.

const RUNS = 5_000;
const CURRENCIES = [
  ['JPY', 0],
  ['USD', 2],
  ['KWD', 3],
] as const;
const OCT = Date.UTC(2026, 9, 1);
const NOV = Date.UTC(2026, 10, 1);
const usage = (sum: string): WindowStats => ({ start: OCT, end: NOV, count: 1, sum });

function modelOf(g: Seeded): PriceModel {
  switch (g.int(0, 2)) {
    case 0:
      return { pricing: 'metered', price: g.decimal(2, 9) };
    case 1:
      return { pricing: 'package', price: g.decimal(2, 3), package_size: String(g.int(1, 1000)) };
    default: {
      const n = g.int(1, 4);
      let top = 0;
      return {
        pricing: 'tiered',
        tiers_mode: g.pick(['graduated', 'volume'] as const),
        tiers: Array.from({ length: n }, (_, i) => ({
          up_to: i < n - 1 ? String((top += g.int(1, 2000))) : null,
          unit_price: g.decimal(1, 6),
          flat_price: g.bool(0.3) ? g.decimal(2, 2) : '0',
        })),
      };
    }
  }
}

const VALUES = ['large', 'small', 'eu', '株式会社', 'x'];

interface Case {
  currency: string;
  scale: number;
  dp: DimensionPrices;
  /** value (null: records without the dimension) → usage sum. */
  groups: { value: string | null; sum: string }[];
}

function caseOf(g: Seeded): Case {
  const [currency, scale] = g.pick(CURRENCIES);
  const priced = VALUES.filter(() => g.bool(0.5));
  const dp: DimensionPrices = {
    dimension: 'model',
    prices: priced.map((value) => ({ value, price: modelOf(g) })),
    default_price: g.bool(0.5) ? modelOf(g) : null,
  };
  const present = [null, ...VALUES].filter(() => g.bool(0.6));
  return { currency, scale, dp, groups: present.map((value) => ({ value, sum: g.decimal(6, 3) })) };
}

function itemOf(c: Case): ItemToPrice {
  return {
    product_id: 'prod_t',
    product_name: 'Tokens',
    model: { pricing: 'metered', price: '999' },
    minimum_amount: null,
    meter: {
      id: 'mtr_t',
      aggregation: 'sum',
      unit: 'tokens',
      usage: usage('0'),
      groups: c.groups.map((x) => ({ dimensions: { model: x.value }, usage: usage(x.sum) })),
    },
    dimension_prices: c.dp,
  };
}

/** The reference: the model of a value is its own price, else the default, else none (0). */
function referenceModel(c: Case, value: string | null): RefModel | null {
  const own = value === null ? undefined : c.dp.prices.find((p) => p.value === value);
  return (own?.price ?? c.dp.default_price) as RefModel | null;
}

t.test('every value is one line at its own model (or the default), unpriced ones at 0, amount = Σ lines', async (t) => {
  const failures = forAll(0x46d1, RUNS, caseOf, (c) => {
    const inv = priceInvoice({ subscription_id: 'sub', currency: c.currency, items: [itemOf(c)] });
    const expected = c.groups.length ? c.groups : [{ value: null, sum: '0' }];
    if (inv.lines.length !== expected.length) return `${inv.lines.length} lines for ${expected.length} values`;
    let total = 0n;
    for (const [i, grp] of expected.entries()) {
      const l = inv.lines[i]!;
      if ((l.dimensions?.model ?? null) !== grp.value)
        return `line ${i} bills ${l.dimensions?.model}, not ${grp.value}`;
      const model = referenceModel(c, grp.value);
      const want = model ? referencePrice(model, decimalQ(grp.sum), c.scale) : 0n;
      if (toMinor(l.amount, c.scale) !== want)
        return `${grp.value}: ${l.amount} ≠ ${fromMinor(want, c.scale)} (${JSON.stringify(model)} × ${grp.sum})`;
      if (!model && !l.description.includes('unpriced')) return `${grp.value}: not marked unpriced`;
      if (l.quantity !== decimalText(grp.sum)) return `${grp.value}: quantity ${l.quantity} ≠ ${grp.sum}`;
      total += want;
    }
    if (toMinor(inv.amount, c.scale) !== total) return `amount ${inv.amount} ≠ Σ ${fromMinor(total, c.scale)}`;
    return null;
  });
  t.same(failures, [], 'priced as the reference prices them');
});

t.test(
  'late usage re-prices each value at the billed period’s prices: billed + adjustment = the reference',
  async (t) => {
    const failures = forAll(0x46d2, RUNS, caseOf, (c) => {
      const billed = priceInvoice({ subscription_id: 'sub', currency: c.currency, items: [itemOf(c)] });
      const first = billed.lines[0]!;
      // Now: every value's usage grown or shrunk by a random amount, and maybe a value first seen late.
      const g = { value: 'late', sum: '7.5' };
      const now = [...c.groups.map((x) => ({ ...x, sum: new Decimal(x.sum).plus('1.25').toFixed() })), g];
      const rows = billed.lines.map((l) => ({
        price_model: l.price_model as never,
        dimensions: l.dimensions!,
        billed_quantity: l.quantity,
        billed_amount: l.amount,
      }));
      const base = {
        invoice_id: 'inv_1',
        period_start: '2026-10-01',
        period_end: '2026-10-31',
        product_id: 'prod_t',
        product_name: 'Tokens',
        meter_id: 'mtr_t',
        meter_type: 'counter' as const,
        aggregation: 'sum',
        unit: 'tokens',
        unique_by: null,
        subscription_id: 'sub',
        usage_start: new Date(OCT),
        usage_end: new Date(NOV),
        service_start: null,
        service_end: null,
        period_start_at: new Date(OCT),
        period_end_at: new Date(NOV),
      };
      const item = {
        first: { ...base, ...rows[0]!, price_model: first.price_model as never },
        groups: rows.map((r) => ({ ...base, ...r })),
        request: { accountId: 'a', meterId: 'mtr_t', type: 'counter' as const, startMs: OCT, endMs: NOV },
      };
      const adjustments = groupAdjustments(
        item,
        now.map((x) => ({ values: [x.value ?? ''], total: usage(x.sum) })),
      );
      const late = priceInvoice({ subscription_id: 'sub', currency: c.currency, items: [], adjustments });
      for (const x of now) {
        const was = billed.lines.find((l) => (l.dimensions?.model ?? null) === x.value);
        const adj = late.lines.find((l) => (l.dimensions?.model ?? null) === x.value);
        const model = referenceModel(c, x.value);
        const want = model ? referencePrice(model, decimalQ(x.sum), c.scale) : 0n;
        const got = toMinor(was?.amount ?? '0', c.scale) + toMinor(adj?.amount ?? '0', c.scale);
        if (got !== want)
          return `${x.value}: billed + adjustment ${fromMinor(got, c.scale)} ≠ ${fromMinor(want, c.scale)}`;
      }
      return null;
    });
    t.same(failures, [], 'each value settles at the reference amount of its usage now');
  },
);

/** "12.500" → "12.5": quantities as the lines write them. */
function decimalText(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}
