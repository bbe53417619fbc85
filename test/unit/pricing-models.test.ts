import t from 'tap';
import { Decimal, roundToMinorUnit } from '../../shared/money/decimal.js';
import { CURRENCY_MINOR_UNITS, minorUnits } from '../../shared/money/currencies.js';
import { creditableExcess } from '../../services/domain/billing/deductions.js';
import {
  billableQuantity,
  minimumTrueUp,
  priceQuantity,
  type PriceModel,
  type Tier,
} from '../../services/domain/pricing/price-models.js';
import { type Seeded, forAll } from './seeded.js';

// The price models (services/domain/pricing/price-models.ts) and the invoice rounding, without a server: the
// worked examples of docs/billing.md as a table, then properties over generated cases checked against a
// reference computed here the long way.

const tiered = (tiers_mode: 'graduated' | 'volume', tiers: [string | null, string, string?][]): PriceModel => ({
  pricing: 'tiered',
  tiers_mode,
  tiers: tiers.map(([up_to, unit_price, flat_price]) => ({ up_to, unit_price, flat_price: flat_price ?? '0' })),
});
const price = (model: PriceModel, quantity: string, currency = 'USD') =>
  priceQuantity(model, new Decimal(quantity), currency).amount.toFixed();

t.test('worked examples (docs/billing.md, Products)', async (t) => {
  const graduated = tiered('graduated', [
    ['1000', '0'],
    ['10000', '0.01', '5'],
    [null, '0.008'],
  ]);
  const volume = tiered('volume', [
    ['100', '1'],
    ['1000', '0.5', '10'],
    [null, '0.25'],
  ]);
  const cases: [string, PriceModel, string, string, string][] = [
    // what, model, quantity, currency, amount
    ['graduated across three tiers: 113.764 → 113.76', graduated, '12345.5', 'USD', '113.76'],
    ['graduated inside the free tier', graduated, '1000', 'USD', '0'],
    ['graduated: reaching tier 2 adds its flat price once', graduated, '1001', 'USD', '5.01'],
    ['volume at the top of tier 1 (up_to inclusive)', volume, '100', 'USD', '100'],
    ['volume one unit into tier 2: every unit at 0.5, + 10 flat', volume, '101', 'USD', '60.5'],
    ['volume in the unbounded tier', volume, '2000', 'USD', '500'],
    [
      'package of 1,000 at 2.5: 2,001 units are 3 packages',
      { pricing: 'package', price: '2.5', package_size: '1000' },
      '2001',
      'USD',
      '7.5',
    ],
    ['package: exactly full packages', { pricing: 'package', price: '2.5', package_size: '1000' }, '2000', 'USD', '5'],
    ['metered 0.01 × 1,234', { pricing: 'metered', price: '0.01' }, '1234', 'USD', '12.34'],
    ['metered in yen: 5 × 0.5 = 2.5 → 3 (half away from zero)', { pricing: 'metered', price: '0.5' }, '5', 'JPY', '3'],
    ['metered in dinar: 5 × 0.0025 = 0.0125 → 0.013', { pricing: 'metered', price: '0.0025' }, '5', 'KWD', '0.013'],
    ['metered 3,495 × 0.001 = 3.495 → 3.50', { pricing: 'metered', price: '0.001' }, '3495', 'USD', '3.5'],
    ['metered 12.5 × 0.25 = 3.125 → 3.13', { pricing: 'metered', price: '0.25' }, '12.5', 'USD', '3.13'],
    [
      'a 9-decimal price stays exact until the one rounding',
      { pricing: 'metered', price: '0.000000001' },
      '4999999',
      'USD',
      '0',
    ],
    ['… and rounds up at half a cent', { pricing: 'metered', price: '0.000000001' }, '5000000', 'USD', '0.01'],
    ['tiered: a quantity ≤ 0 reaches no tier', graduated, '-5', 'USD', '0'],
    ['volume: a quantity ≤ 0 reaches no tier', volume, '0', 'USD', '0'],
    [
      'package: a quantity ≤ 0 is no package',
      { pricing: 'package', price: '2.5', package_size: '1000' },
      '-1',
      'USD',
      '0',
    ],
  ];
  for (const [what, model, quantity, currency, amount] of cases)
    t.equal(price(model, quantity, currency), amount, what);
  const usage = priceQuantity({ pricing: 'metered', price: '0.01' }, new Decimal(1234), 'USD').amount;
  t.equal(minimumTrueUp(usage, '25', 'USD').toFixed(), '12.66', 'minimum commitment 25 tops 12.34 up by 12.66');
  t.equal(minimumTrueUp(usage, '10', 'USD').toFixed(), '0', 'a minimum reached adds nothing');
  t.equal(minimumTrueUp(usage, null, 'USD').toFixed(), '0', 'no minimum, no true-up');
  t.equal(
    priceQuantity(graduated, new Decimal('12345.5'), 'USD').breakdown,
    'graduated: 1,000 × 0 + 9,000 × 0.01 + 5 flat + 2,345.5 × 0.008',
    'the line shows how the amount was reached',
  );
});

/** Ascending tiers, the last unbounded; prices with up to 9 decimals. */
function tiersOf(g: Seeded): Tier[] {
  const n = g.int(1, 5);
  const tops: number[] = [];
  let top = 0;
  for (let i = 0; i < n - 1; i++) tops.push((top += g.int(1, 5000)));
  return Array.from({ length: n }, (_, i) => ({
    up_to: i < n - 1 ? String(tops[i]) : null,
    unit_price: g.decimal(2, 9),
    flat_price: g.bool(0.3) ? g.decimal(2, 2) : '0',
  }));
}

/** Graduated the long way: unit by tier, each tier's part and flat price added, rounded once. */
function graduatedReference(tiers: Tier[], q: Decimal, currency: string): Decimal {
  let total = new Decimal(0);
  let below = new Decimal(0);
  for (const tier of tiers) {
    if (q.lte(below)) break;
    const top = tier.up_to === null ? q : Decimal.min(q, tier.up_to);
    total = total.plus(top.minus(below).times(tier.unit_price)).plus(tier.flat_price);
    if (tier.up_to !== null) below = new Decimal(tier.up_to);
  }
  return roundToMinorUnit(total, currency);
}

const CURRENCIES = Object.keys(CURRENCY_MINOR_UNITS);

t.test('graduated is the sum of its tiers (reference computation), for generated tiers and quantities', async (t) => {
  const failures = forAll(
    25_001,
    400,
    (g) => ({ tiers: tiersOf(g), q: g.decimal(5, 3), currency: g.pick(CURRENCIES) }),
    ({ tiers, q, currency }) => {
      const got = priceQuantity({ pricing: 'tiered', tiers_mode: 'graduated', tiers }, new Decimal(q), currency).amount;
      const want = graduatedReference(tiers, new Decimal(q), currency);
      return got.eq(want) ? null : `got ${got}, want ${want}`;
    },
  );
  t.same(failures, []);
});

t.test('graduated = volume when all the usage falls in one tier', async (t) => {
  const failures = forAll(
    25_002,
    400,
    (g) => {
      const tiers = tiersOf(g);
      const first = tiers[0]!.up_to;
      // a quantity inside the first tier, or any quantity when there is only one (unbounded) tier
      const q = first === null ? g.decimal(6, 3) : String(g.int(1, Number(first)));
      return { tiers, q, currency: g.pick(CURRENCIES) };
    },
    ({ tiers, q, currency }) => {
      const graduated = priceQuantity({ pricing: 'tiered', tiers_mode: 'graduated', tiers }, new Decimal(q), currency);
      const volume = priceQuantity({ pricing: 'tiered', tiers_mode: 'volume', tiers }, new Decimal(q), currency);
      return graduated.amount.eq(volume.amount) ? null : `graduated ${graduated.amount} ≠ volume ${volume.amount}`;
    },
  );
  t.same(failures, []);
});

t.test('volume prices every unit at the tier the total falls in; package rounds up to whole packages', async (t) => {
  const failures = forAll(
    25_003,
    400,
    (g) => ({ tiers: tiersOf(g), q: g.decimal(5, 3), size: String(g.int(1, 1000)), p: g.decimal(3, 9) }),
    ({ tiers, q, size, p }) => {
      const quantity = new Decimal(q);
      const volume = priceQuantity({ pricing: 'tiered', tiers_mode: 'volume', tiers }, quantity, 'USD').amount;
      const tier = tiers.find((x) => x.up_to === null || quantity.lte(x.up_to))!;
      const wantVolume = quantity.lte(0)
        ? new Decimal(0)
        : roundToMinorUnit(quantity.times(tier.unit_price).plus(tier.flat_price), 'USD');
      if (!volume.eq(wantVolume)) return `volume ${volume} ≠ ${wantVolume}`;
      const pkg = priceQuantity({ pricing: 'package', price: p, package_size: size }, quantity, 'USD').amount;
      const packages = quantity.lte(0) ? 0 : Math.ceil(Number(q) / Number(size));
      const wantPkg = roundToMinorUnit(new Decimal(packages).times(p), 'USD');
      return pkg.eq(wantPkg) ? null : `package ${pkg} ≠ ${wantPkg}`;
    },
  );
  t.same(failures, []);
});

t.test('more usage never costs less (prices ≥ 0) under graduated, package and metered pricing', async (t) => {
  // (Volume pricing may: 101 units at tier 2's lower price can cost less than 100 at tier 1's — by design.)
  const failures = forAll(
    25_004,
    300,
    (g) => ({
      tiers: tiersOf(g),
      a: g.decimal(5, 2),
      b: g.decimal(5, 2),
      size: String(g.int(1, 500)),
      p: g.decimal(2, 9),
    }),
    ({ tiers, a, b, size, p }) => {
      const [lo, hi] = new Decimal(a).lte(b) ? [a, b] : [b, a];
      const models: PriceModel[] = [
        { pricing: 'tiered', tiers_mode: 'graduated', tiers },
        { pricing: 'package', price: p, package_size: size },
        { pricing: 'metered', price: p },
      ];
      for (const model of models) {
        const plo = priceQuantity(model, new Decimal(lo), 'USD').amount;
        const phi = priceQuantity(model, new Decimal(hi), 'USD').amount;
        if (plo.gt(phi)) return `${model.pricing}: ${lo} → ${plo} but ${hi} → ${phi}`;
      }
      return null;
    },
  );
  t.same(failures, []);
});

t.test('rounding: every ISO 4217 exponent, half away from zero', async (t) => {
  const exponents = [...new Set(Object.values(CURRENCY_MINOR_UNITS))].sort();
  t.same(exponents, [0, 2, 3, 4], 'the exponents the currency table holds');
  const table: [string, string, string][] = [
    ['JPY', '2.5', '3'],
    ['JPY', '2.4999', '2'],
    ['JPY', '-2.5', '-3'],
    ['USD', '0.005', '0.01'],
    ['USD', '0.0049999', '0'],
    ['USD', '1.995', '2'],
    ['USD', '-0.005', '-0.01'],
    ['KWD', '0.0125', '0.013'],
    ['KWD', '0.0124999', '0.012'],
    ['BHD', '-1.0005', '-1.001'],
    ['CLF', '0.00005', '0.0001'],
    ['CLF', '12.34564999', '12.3456'],
  ];
  for (const [currency, amount, rounded] of table)
    t.equal(roundToMinorUnit(amount, currency).toFixed(), rounded, `${amount} ${currency} → ${rounded}`);

  const failures = forAll(
    25_005,
    600,
    (g) => ({ currency: g.pick(CURRENCIES), x: `${g.bool() ? '-' : ''}${g.decimal(8, 12)}` }),
    ({ currency, x }) => {
      const e = minorUnits(currency);
      const r = roundToMinorUnit(x, currency);
      const unit = new Decimal(10).pow(-e);
      if (r.decimalPlaces() > e) return `${r} has more than ${e} decimals`;
      const error = r.minus(x).abs();
      if (error.gt(unit.div(2))) return `off by ${error}`;
      if (error.eq(unit.div(2)) && r.abs().lt(new Decimal(x).abs())) return 'a half rounded towards zero';
      if (!roundToMinorUnit(new Decimal(x).neg(), currency).eq(r.neg())) return 'not symmetric around zero';
      return null;
    },
  );
  t.same(failures, []);
  // Exact halves of every exponent, both signs: always away from zero.
  for (const e of exponents) {
    const currency = CURRENCIES.find((c) => CURRENCY_MINOR_UNITS[c] === e)!;
    const half = new Decimal(10).pow(-e).div(2);
    t.equal(
      roundToMinorUnit(half.plus(7), currency).toFixed(),
      new Decimal(7).plus(half.times(2)).toFixed(),
      `${currency} +half`,
    );
    t.equal(
      roundToMinorUnit(half.plus(7).neg(), currency).toFixed(),
      new Decimal(-7).minus(half.times(2)).toFixed(),
      `${currency} −half`,
    );
  }
});

t.test('usage below zero prices at 0 in every model (issue 49: a gauge is a level, not a refund)', async (t) => {
  const models: PriceModel[] = [
    { pricing: 'metered', price: '0.01' },
    { pricing: 'flat', price: '49' },
    { pricing: 'package', price: '2.5', package_size: '10' },
    tiered('graduated', [
      ['10', '-1'],
      [null, '0.5'],
    ]),
    tiered('volume', [
      ['10', '1', '5'],
      [null, '0.5'],
    ]),
  ];
  t.equal(billableQuantity(new Decimal('-0.000000001')).toFixed(), '0');
  t.equal(billableQuantity(new Decimal('7')).toFixed(), '7');
  const failures = forAll(
    25_049,
    300,
    (g) => ({ model: g.pick(models), q: new Decimal(g.decimal(9, 9)).plus('0.000000001').neg().toFixed() }),
    ({ model, q }) => {
      const priced = priceQuantity(model, new Decimal(q), 'USD');
      if (!priced.amount.isZero()) return `${model.pricing} ${q} → ${priced.amount}`;
      return priced.breakdown === 'below zero: priced as 0' ? null : `breakdown ${priced.breakdown}`;
    },
  );
  t.same(failures, []);
  t.equal(price({ pricing: 'metered', price: '0.01' }, '-100000000'), '0', 'the review’s −100,000,000: not −1,000,000');
});

t.test('a negative total becomes credit only as far as it gives back what was billed before', async (t) => {
  const lines = (...ls: [string, string][]) => ls.map(([type, amount]) => ({ type, amount }) as never);
  t.equal(creditableExcess(lines(['usage', '5'], ['deduction', '-12'])).toFixed(), '7', 'a threshold deduction');
  t.equal(
    creditableExcess(lines(['usage', '5'], ['tax', '-2.4'], ['deduction', '-12'])).toFixed(),
    '9.4',
    'with the tax it takes back',
  );
  t.equal(creditableExcess(lines(['adjustment', '-30'], ['flat', '10'])).toFixed(), '20', 'a late-usage adjustment');
  t.equal(creditableExcess(lines(['usage', '-1000000'])).toFixed(), '0', 'usage never');
  t.equal(
    creditableExcess(lines(['usage', '-1000'], ['deduction', '-10'])).toFixed(),
    '10',
    'at most what the give-back lines gave back',
  );
  t.equal(creditableExcess(lines(['usage', '5'], ['deduction', '-5'])).toFixed(), '0', 'a total of 0: nothing');
  t.equal(creditableExcess(lines(['discount', '-5'], ['flat', '3'])).toFixed(), '0', 'a discount never');
});
