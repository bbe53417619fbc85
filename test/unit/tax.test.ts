import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { sumOfLines, type PricedInvoice, type PricedLine } from '../../services/domain/pricing/invoice-lines.js';
import { invoiceAmounts } from '../../services/domain/billing/invoice-amounts.js';
import { lineTaxes, ratesOf } from '../../services/domain/tax/compute.js';
import { taxReversed } from '../../services/domain/tax/reverse.js';
import type { TaxProfile, TaxRateRow } from '../../services/domain/tax/types.js';
import { isCountryCode } from '../../shared/countries.js';
import { forAll } from './seeded.js';

// Invoice tax (services/domain/tax/) without a server: which rates apply, per-line rounding, adjustment and credit
// lines, amount = Σ lines, and credit notes reversing exactly the tax of a line, never more.

const rate = (id: string, percentage: string, inclusive: boolean, country: string | null = null): TaxRateRow => ({
  id,
  name: id.toUpperCase(),
  percentage,
  country,
  region: null,
  inclusive,
  archived_at: null,
  created_at: new Date(0),
});
const line = (l: Partial<PricedLine> & Pick<PricedLine, 'type' | 'amount'>): PricedLine => ({
  product_id: 'prod_a',
  meter_id: null,
  description: l.type,
  quantity: '1',
  unit_price: l.amount,
  price_model: null,
  adjusts_invoice_id: null,
  ...l,
});
const invoice = (currency: string, lines: PricedLine[]): PricedInvoice => ({
  subscription_id: 'sub_x',
  currency,
  amount: sumOfLines(lines).toFixed(),
  lines,
});
const FR: TaxProfile = { tax_exempt: 'none', country: 'FR', region: null };

t.test('which rates: the product’s own, else the country’s defaults; none when exempt or reverse', async (t) => {
  const vat = rate('vat', '20', false, 'FR');
  const de = rate('mwst', '19', true, 'DE');
  const active = new Map([vat, de].map((r) => [r.id, r]));
  t.same(
    ratesOf([], FR, active).map((r) => r.id),
    ['vat'],
  );
  t.same(
    ratesOf(['mwst'], FR, active).map((r) => r.id),
    ['mwst'],
    'a product naming rates: those',
  );
  t.same(ratesOf(['gone'], FR, active), [], 'an archived (inactive) named rate: nothing');
  t.same(ratesOf([], { ...FR, country: null }, active), [], 'no address: no default');
  t.same(ratesOf(['vat'], { ...FR, tax_exempt: 'reverse' }, active), []);
  t.same(ratesOf(['vat'], { ...FR, tax_exempt: 'exempt' }, active), []);
});

t.test('adjustment lines are taxed like the lines they adjust; credit lines never', async (t) => {
  const vat = rate('vat', '20', false);
  const inv = invoice('USD', [
    line({ type: 'usage', amount: '10.33' }),
    line({ type: 'adjustment', amount: '-0.33', adjusts_invoice_id: 'inv_old' }),
    line({ type: 'credit', product_id: null, amount: '-5' }),
  ]);
  const totals = invoiceAmounts(inv, FR, () => [vat]);
  t.same(totals, { subtotal: '10', tax: '2' });
  t.same(
    inv.lines.map((l) => l.taxes?.[0]?.amount ?? null),
    ['2.07', '-0.07', null, null],
  );
  t.match(inv.lines[3], {
    type: 'tax',
    tax_rate_id: 'vat',
    amount: '2',
    tax_amount: '2',
    description: 'VAT 20 % on 10.00',
  });
  t.equal(inv.amount, '7', '10 + 2 tax − 5 credit');
});

t.test('inclusive and exclusive on one line; amount = Σ lines for any amounts and currencies', async (t) => {
  t.same(lineTaxes('119', [rate('in', '19', true), rate('ex', '5', false)], 'EUR'), [
    { tax_rate_id: 'in', amount: '19' },
    { tax_rate_id: 'ex', amount: '5' },
  ]);
  const failures = forAll(
    31,
    300,
    (g) => {
      const currency = g.pick(['USD', 'JPY', 'KWD', 'EUR']);
      const scale = currency === 'JPY' ? 0 : currency === 'KWD' ? 3 : 2;
      const amounts = Array.from({ length: g.int(1, 6) }, () =>
        new Decimal(g.int(0, 10_000_000)).div(10 ** scale).toFixed(),
      );
      const rates: [string, boolean][] = [
        [String(g.int(0, 2500) / 100), g.bool()],
        [String(g.int(0, 30)), g.bool()],
      ];
      return { currency, scale, amounts, rates };
    },
    ({ currency, scale, amounts, rates }) => {
      const inv = invoice(
        currency,
        amounts.map((amount) => line({ type: 'flat', amount })),
      );
      const own = rates.map(([p, inclusive], i) => rate(`r${i}`, p, inclusive));
      const totals = invoiceAmounts(inv, FR, () => own);
      if (!sumOfLines(inv.lines).eq(inv.amount)) return 'amount ≠ Σ lines';
      const taxLines = inv.lines.filter((l) => l.type === 'tax');
      if (!taxLines.reduce((s, l) => s.plus(l.tax_amount!), new Decimal(0)).eq(totals.tax)) return 'tax ≠ Σ tax lines';
      if (!inv.lines.every((l) => new Decimal(l.amount).decimalPlaces() <= scale)) return 'finer than the minor unit';
      return null;
    },
  );
  t.same(failures, []);
});

t.test('credit notes reverse a line’s tax in proportion, exactly, never more', async (t) => {
  const l = { amount: '10.33', taxes: [{ tax_rate_id: 'vat', amount: '2.07' }] };
  t.same(taxReversed(l, '0', '5', 'EUR'), [{ tax_rate_id: 'vat', amount: '1' }]);
  t.same(taxReversed(l, '5', '5.33', 'EUR'), [{ tax_rate_id: 'vat', amount: '1.07' }]);
  const failures = forAll(
    32,
    300,
    (g) => {
      const amount = g.int(1, 100_000);
      const credits: number[] = [];
      for (let left = amount; left > 0; ) {
        const c = Math.min(left, g.int(1, amount));
        credits.push(c);
        left -= c;
      }
      return { amount, tax: g.int(0, amount), credits };
    },
    ({ amount, tax, credits }) => {
      const taxed = { amount: String(amount / 100), taxes: [{ tax_rate_id: 'r', amount: String(tax / 100) }] };
      let credited = 0;
      let reversed = new Decimal(0);
      for (const c of credits) {
        const r = taxReversed(taxed, String(credited / 100), String(c / 100), 'USD')[0]!;
        if (new Decimal(r.amount).isNegative()) return 'a negative reversal';
        reversed = reversed.plus(r.amount);
        credited += c;
        if (reversed.gt(tax / 100)) return 'more than was taxed';
      }
      return reversed.eq(tax / 100) ? null : `reversed ${reversed.toFixed()} of ${tax / 100}`;
    },
  );
  t.same(failures, []);
});

t.test('country codes: ISO 3166-1 alpha-2 only', async (t) => {
  for (const c of ['DE', 'FR', 'US', 'JP', 'KW', 'CA']) t.ok(isCountryCode(c), c);
  for (const c of ['XX', 'ZZ', 'de', 'DEU', '']) t.notOk(isCountryCode(c), c);
});

t.test('a deduction (progressive billing) takes back exactly the tax its threshold invoice billed', async (t) => {
  const vat = rate('vat', '19', false);
  const rates = () => [vat];
  const byId = (id: string) => (id === 'vat' ? vat : undefined);
  // Threshold invoice: 12.50 → VAT 2.375 → 2.38.
  const first = invoice('USD', [line({ type: 'usage', amount: '12.5' })]);
  t.same(invoiceAmounts(first, FR, rates, byId), { subtotal: '12.5', tax: '2.38' });
  // The final invoice: 30.00 (VAT 5.70) less the threshold invoice (12.50, VAT 2.38).
  const final = invoice('USD', [
    line({ type: 'usage', amount: '30' }),
    line({
      type: 'deduction',
      product_id: null,
      amount: '-12.5',
      taxes: [{ tax_rate_id: 'vat', amount: '-2.38', base: '-12.5' }],
    }),
  ]);
  t.same(invoiceAmounts(final, FR, rates, byId), { subtotal: '17.5', tax: '3.32' }, '5.70 − 2.38');
  const tax = final.lines.find((l) => l.type === 'tax')!;
  t.equal(tax.description, 'VAT 19 % on 17.50');
  t.equal(final.amount, '20.82', 'amount = Σ lines');
  t.equal(new Decimal('2.38').plus('3.32').toFixed(), '5.7', 'together: the tax of the whole period');
  // An exempt customer now still has the tax billed then taken back.
  const exempt = invoice('USD', [
    line({ type: 'usage', amount: '30' }),
    line({ type: 'deduction', product_id: null, amount: '-12.5', taxes: [{ tax_rate_id: 'vat', amount: '-2.38' }] }),
  ]);
  t.same(invoiceAmounts(exempt, { ...FR, tax_exempt: 'exempt' }, rates, byId), { subtotal: '17.5', tax: '-2.38' });
});
