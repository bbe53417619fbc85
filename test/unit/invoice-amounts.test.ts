import t from 'tap';
import { attachedDiscounts, invoiceAmounts } from '../../services/domain/billing/invoice-amounts.js';
import { sumOfLines, type PricedInvoice, type PricedLine } from '../../services/domain/pricing/invoice-lines.js';
import type { TaxProfile, TaxRateRow } from '../../services/domain/tax/types.js';
import { allocateCredits } from '../../services/domain/billing/credits.js';
import { creditState, takeNote } from './credit-notes-sim.js';

// The invoice-amount pipeline (services/domain/billing/invoice-amounts.ts) and credit notes on its invoices: the
// examples of issue 41 items 2, 3, 4, 5 and 7, each failing on the code before it.

const rate = (id: string, percentage: string, inclusive = false): TaxRateRow => ({
  id,
  name: id.toUpperCase(),
  percentage,
  country: 'FR',
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
const discount = (product: string, amount: string): PricedLine =>
  line({ type: 'discount', product_id: product, amount, coupon_id: 'cpn_x' });

t.test('item 2: a discounted line is taxed once, on its amount after the discount', async (t) => {
  // 253.04 USD, 19 % off (48.0776 → 48.08), 10 % exclusive VAT: 10 % of 204.96 = 20.496 → 20.50 (was 25.30 − 4.81 = 20.49).
  const inv = invoice('USD', [line({ type: 'flat', amount: '253.04' }), discount('prod_a', '-48.08')]);
  const totals = invoiceAmounts(inv, FR, () => [rate('vat', '10')]);
  t.same(totals, { subtotal: '204.96', tax: '20.5' });
  t.same(
    inv.lines[0]!.taxes,
    [{ tax_rate_id: 'vat', amount: '20.5', base: '204.96' }],
    'the tax and its base, on the line',
  );
  t.equal(inv.lines[1]!.taxes, undefined, 'the discount line is not taxed on its own');
  t.match(inv.lines[2], { type: 'tax', amount: '20.5', description: 'VAT 10 % on 204.96' });
  t.equal(inv.amount, '225.46');
});

t.test('a product’s discount is attached to its lines by whole minor units, adding up exactly', async (t) => {
  const lines = [
    line({ type: 'usage', amount: '10' }),
    line({ type: 'minimum_commitment', amount: '5' }),
    line({ type: 'flat', product_id: 'prod_b', amount: '7' }),
    line({ type: 'adjustment', amount: '3', adjusts_invoice_id: 'inv_old' }),
    discount('prod_a', '-1'),
    line({ type: 'discount', amount: '-0.5', adjusts_invoice_id: 'inv_old' }),
  ];
  const { discount: d, attached } = attachedDiscounts(lines, 'USD');
  t.same(
    d.map((x) => x.toFixed()),
    ['-0.67', '-0.33', '0', '-0.5', '0', '0'],
    'the period discount on the period’s own lines of the product, the late-usage one on its adjustment',
  );
  t.same(attached, [false, false, false, false, true, true]);
  // An invoice issued before this rule taxed its discount lines on their own: a credit note leaves them as they were.
  const legacy = attachedDiscounts(
    [
      line({ type: 'flat', amount: '10' }),
      { ...discount('prod_a', '-1'), taxes: [{ tax_rate_id: 'vat', amount: '-0.2' }] },
    ],
    'USD',
  );
  t.same(legacy.attached, [false, false]);
  t.same(
    legacy.discount.map((x) => x.toFixed()),
    ['0', '0'],
  );
});

t.test('item 7: one-off lines are in the subtotal and taxed at the customer’s rates', async (t) => {
  // Flat 100 at 20 % + a one-off 50: subtotal 150, tax 30, amount 180 (was subtotal 100, tax 20, amount 170).
  const inv = invoice('EUR', [
    line({ type: 'flat', amount: '100' }),
    line({ type: 'one_off', product_id: null, amount: '50' }),
  ]);
  const vat = rate('vat', '20');
  const totals = invoiceAmounts(inv, FR, (product) => (product === null ? [vat] : [vat]));
  t.same(totals, { subtotal: '150', tax: '30' });
  t.equal(inv.amount, '180');
  const exempt = invoice('EUR', [line({ type: 'one_off', product_id: null, amount: '50' })]);
  t.same(
    invoiceAmounts(exempt, { ...FR, tax_exempt: 'exempt' }, () => [vat]),
    { subtotal: '50', tax: '0' },
  );
});

t.test('item 3: a credit note credits a discounted line its net and the tax on it', async (t) => {
  // A 100 − 50 and B 100 − 50 at 20 %: 120 in all. Crediting A by quantity gives 60 (was 120), then B 60 (was refused).
  const inv = invoice('EUR', [
    line({ type: 'flat', amount: '100' }),
    line({ type: 'flat', product_id: 'prod_b', amount: '100' }),
    discount('prod_a', '-50'),
    discount('prod_b', '-50'),
  ]);
  const totals = invoiceAmounts(inv, FR, () => [rate('vat', '20')]);
  t.equal(inv.amount, '120');
  const state = creditState(inv, totals.tax);
  t.same(takeNote(state, { kind: 'lines', lines: [{ line: 0, quantity: '1' }] }), { amount: '60', tax: '10' });
  t.same(takeNote(state, { kind: 'lines', lines: [{ line: 1, quantity: '1' }] }), { amount: '60', tax: '10' });
  t.equal(state.invoice.amount_credited, '120', 'the whole invoice, exactly');
  t.throws(() => takeNote(state, { kind: 'lines', lines: [{ line: 0, amount: '0.01' }] }), {
    code: 'credit_exceeds_line',
  });
});

t.test('item 4: a credit by amount reverses tax in proportion to the total before prepaid credit', async (t) => {
  // 100 + 20 VAT − 60 prepaid credit = 60 due; refunding 60 reverses 60 × 20 / 120 = 10 (was 20).
  const inv = invoice('EUR', [line({ type: 'flat', amount: '100' })]);
  const totals = invoiceAmounts(inv, FR, () => [rate('vat', '20')]);
  allocateCredits(
    [{ id: 'cred_1', account_id: 'acc', currency: 'EUR', remaining: '60', expires_at: null, created_at: new Date(0) }],
    [{ invoice_id: 'inv_1', account_id: 'acc', priced: inv }],
  );
  t.equal(inv.amount, '60');
  const state = creditState(inv, totals.tax);
  t.same(takeNote(state, { kind: 'amount', amount: '60' }), { amount: '60', tax: '10' });
});

t.test('item 5: crediting by quantity is cumulative; the last units take the rest of the line', async (t) => {
  // 0.03 for 2 units: 0.02 then 0.01 (the second was refused).
  const small = invoice('USD', [line({ type: 'flat', quantity: '2', unit_price: '0.015', amount: '0.03' })]);
  const s1 = creditState(small, invoiceAmounts(small, FR, () => []).tax);
  t.same(takeNote(s1, { kind: 'lines', lines: [{ line: 0, quantity: '1' }] }), { amount: '0.02', tax: '0' });
  t.same(takeNote(s1, { kind: 'lines', lines: [{ line: 0, quantity: '1' }] }), { amount: '0.01', tax: '0' });
  // 100.00 for 3 seats + 20 % VAT, a seat at a time: 40.00 + 40.00 + 40.00 = 120.00 (was 40 + 39.99 + 40 = 119.99).
  const seats = invoice('USD', [line({ type: 'flat', quantity: '3', unit_price: '33.333333333', amount: '100' })]);
  const s2 = creditState(seats, invoiceAmounts(seats, FR, () => [rate('vat', '20')]).tax);
  const notes = [1, 2, 3].map(() => takeNote(s2, { kind: 'lines', lines: [{ line: 0, quantity: '1' }] }));
  t.same(
    notes.map((n) => n.amount),
    ['40', '40', '40'],
  );
  t.equal(s2.invoice.amount_credited, '120');
  t.equal(s2.invoice.tax_credited, '20', 'tax reversed = tax charged');
});
