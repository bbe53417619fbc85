import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { allocate, discountOf, termsLabel } from '../../services/domain/coupons/discount.js';

/** The discount maths (services/domain/coupons/discount.ts, docs/coupons.md): exact, one rounding, never below zero. */
const d = (x: string | number) => new Decimal(x);
const pct = (p: string) => ({ percent_off: p, amount_off: null });
const off = (a: string) => ({ percent_off: null, amount_off: a });

t.test('percent_off: rounded once, on the total, half to even', async (t) => {
  t.equal(discountOf(pct('25'), d('33.38'), 'USD').toString(), '8.34', '8.345 → 8.34 (to even)');
  t.equal(discountOf(pct('25'), d('33.42'), 'USD').toString(), '8.36', '8.355 → 8.36 (to even)');
  t.equal(discountOf(pct('12.5'), d('101'), 'JPY').toString(), '13', '12.625 JPY → 13');
  t.equal(discountOf(pct('100'), d('49.99'), 'USD').toString(), '49.99', '100 % takes all of it');
  t.equal(discountOf(pct('25'), d('0'), 'USD').toString(), '0', 'nothing to discount');
  t.equal(discountOf(pct('25'), d('-3'), 'USD').toString(), '0', 'never on a negative period');
});

t.test('amount_off: capped at the charges', async (t) => {
  t.equal(discountOf(off('10'), d('33.38'), 'USD').toString(), '10');
  t.equal(discountOf(off('10'), d('7.5'), 'USD').toString(), '7.5', 'never below zero');
  t.equal(discountOf(off('10'), d('0'), 'USD').toString(), '0');
});

t.test('allocate: whole minor units, adding up exactly, largest remainder first', async (t) => {
  const shares = allocate(d('10'), [d('1'), d('1'), d('1')], 'USD').map(String);
  t.same(shares, ['3.34', '3.33', '3.33'], 'the odd cent to the first of equal remainders');
  t.same(allocate(d('8.35'), [d('10'), d('23.4')], 'USD').map(String), ['2.5', '5.85']);
  t.same(allocate(d('5'), [d('-2'), d('4')], 'USD').map(String), ['0', '5'], 'a negative weight takes nothing');
  t.same(allocate(d('0'), [d('2')], 'USD').map(String), ['0']);
  for (let i = 0; i < 200; i++) {
    const weights = Array.from({ length: 1 + (i % 5) }, (_, k) => d((((i + 1) * (k + 7) * 37) % 10000) / 100));
    const total = d(((i * 97) % 5000) / 100);
    const sum = allocate(total, weights, 'USD').reduce((s, x) => s.plus(x), d(0));
    if (!sum.eq(total)) t.fail(`allocate(${total}, ${weights}) adds up to ${sum}`);
  }
});

t.test('labels', async (t) => {
  t.equal(termsLabel({ percent_off: '25', amount_off: null, currency: null }), '25 % off');
  t.equal(termsLabel({ percent_off: null, amount_off: '10', currency: 'USD' }), '10.00 USD off');
  t.equal(termsLabel({ percent_off: null, amount_off: '1000', currency: 'JPY' }), '1000 JPY off');
});
