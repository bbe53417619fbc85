import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { lineBreakdown } from '../../services/domain/invoices/line-breakdown.js';
import { priceQuantity, type PriceModel } from '../../services/domain/pricing/price-models.js';

// The sub-lines an invoice PDF prints under a tiered or package usage line (issue 48): each multiplies, and
// Σ sub-lines = the line's amount exactly — for the amount the pricing rule gives, whatever the model.
const usage = (model: PriceModel, quantity: string, currency = 'USD') => ({
  type: 'usage',
  description:
    'LLM tokens — x tokens' +
    (priceQuantity(model, new Decimal(quantity), currency).breakdown
      ? ` (${priceQuantity(model, new Decimal(quantity), currency).breakdown})`
      : ''),
  quantity,
  amount: priceQuantity(model, new Decimal(quantity), currency).amount.toString(),
  price_model: model,
});
const tiers = (mode: 'graduated' | 'volume'): PriceModel => ({
  pricing: 'tiered',
  tiers_mode: mode,
  tiers: [
    { up_to: '1000', unit_price: '0', flat_price: '0' },
    { up_to: '10000', unit_price: '0.0013', flat_price: '5' },
    { up_to: null, unit_price: '0.00071', flat_price: '0' },
  ],
});

t.test('every sub-line multiplies and they add up to the line, to the cent', async (t) => {
  const models: PriceModel[] = [
    tiers('graduated'),
    tiers('volume'),
    { pricing: 'package', price: '2.5', package_size: '1000' },
  ];
  for (const model of models)
    for (const q of ['1', '999', '1000', '1001', '10000', '12345.5', '250001', '7777777']) {
      const line = usage(model, q);
      const b = lineBreakdown(line, 'USD');
      t.ok(b, `${model.pricing} ${q}: broken down`);
      const sum = b!.sub.reduce((s, l) => s.plus(l.amount), new Decimal(0));
      t.ok(sum.eq(line.amount), `${model.pricing} ${q}: Σ ${sum} = ${line.amount}`);
      for (const l of b!.sub)
        if (l.quantity !== null)
          t.ok(new Decimal(l.quantity).times(l.unit_price!).eq(l.amount), `${l.description}: multiplies`);
      t.equal(b!.description, 'LLM tokens — x tokens', 'the inline breakdown is gone from the description');
    }
});

t.test('the tiers as a customer reads them', async (t) => {
  const b = lineBreakdown(usage(tiers('graduated'), '12001'), 'USD')!;
  t.same(
    b.sub.map((l) => [l.description, l.quantity, l.unit_price, l.amount]),
    [
      ['Tier 1 (up to 1,000)', '1000', '0', '0'],
      ['Tier 2 (over 1,000 up to 10,000)', '9000', '0.0013', '11.7'],
      ['Tier 2 flat fee', '1', '5', '5'],
      ['Tier 3 (over 10,000)', '2001', '0.00071', '1.42071'],
      ['Rounding', null, null, '-0.00071'],
    ],
  );
  const v = lineBreakdown(usage(tiers('volume'), '5000'), 'USD')!;
  t.same(
    v.sub.map((l) => l.description),
    ['All units at tier 2 (over 1,000 up to 10,000)', 'Tier 2 flat fee'],
  );
});

t.test('no breakdown where it would not add up or does not apply', async (t) => {
  const line = usage(tiers('graduated'), '12001');
  t.equal(lineBreakdown({ ...line, amount: '99.99' }, 'USD'), null, 'a stored amount the model does not give');
  t.equal(lineBreakdown({ ...line, type: 'adjustment' }, 'USD'), null, 'an adjustment: a difference, not a price');
  t.equal(lineBreakdown({ ...line, price_model: null }, 'USD'), null, 'no price model');
  t.equal(lineBreakdown(usage(tiers('graduated'), '0'), 'USD'), null, 'no usage: no tier reached');
  t.equal(lineBreakdown(usage({ pricing: 'metered', price: '0.1' }, '10'), 'USD'), null, 'a plain unit price');
});
