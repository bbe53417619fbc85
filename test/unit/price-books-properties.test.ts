import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { priceInvoice } from '../../services/domain/pricing/invoice-lines.js';
import { couponTermsIn, productPriceIn, type ProductBooks } from '../../services/domain/pricing/price-books.js';
import type { Tier } from '../../services/domain/pricing/price-models.js';
import { discountOf } from '../../services/domain/coupons/discount.js';
import { planItemIn } from '../../services/domain/plans/price-books.js';
import type { DimensionPriceModel } from '../../services/domain/pricing/dimension-prices.js';
import type { Item } from '../../services/domain/subscriptions/types.js';
import { type Seeded, forAll } from './seeded.js';
import { decimalQ, fromMinor, referencePrice, toMinor, type RefModel } from './money-reference.js';

// Price books (issue 46 item 2) as properties, against the BigInt reference (test/unit/money-reference.ts): a product
// priced in random currencies (JPY 0, USD 2, KWD 3, BHD 3, EUR 2 decimals) with random prices, tiers and packages;
// for each currency the customer may be in, the invoice line of a random quantity is the reference price of THAT
// book's model (never another book's), rounded once to that currency's minor unit; a currency without a book has no
// price; an amount_off coupon takes its own amount in each of its currencies, none elsewhere; a plan item's own
// amounts (a minimum, per-dimension prices) are taken in a subscriber's currency from that book only, the minimum's
// true-up is to that book's minimum, and exactly the amounts without that book are reported missing.

const RUNS = 4_000;
const SCALES: Record<string, number> = { JPY: 0, USD: 2, EUR: 2, KWD: 3, BHD: 3 };
const CODES = Object.keys(SCALES);

function tiersOf(g: Seeded): Tier[] {
  const n = g.int(1, 4);
  let top = 0;
  return Array.from({ length: n }, (_, i) => ({
    up_to: i < n - 1 ? String((top += g.int(1, 5000))) : null,
    unit_price: g.decimal(3, 6),
    flat_price: g.bool(0.3) ? g.decimal(3, 2) : '0',
  }));
}

interface Case {
  product: ProductBooks;
  currency: string;
  quantity: string;
}

function caseOf(g: Seeded): Case {
  const pricing = g.pick(['flat', 'metered', 'package', 'tiered'] as const);
  const codes = CODES.filter(() => g.bool(0.6));
  const own = g.pick(CODES);
  const options = Object.fromEntries(
    codes
      .filter((c) => c !== own)
      .map((c) => [c, pricing === 'tiered' ? { tiers: tiersOf(g) } : { price: g.decimal(4, 9) }]),
  );
  const product: ProductBooks = {
    currency: own,
    currency_options: options,
    pricing,
    price: pricing === 'tiered' ? '0' : g.decimal(4, 9),
    tiers_mode: pricing === 'tiered' ? g.pick(['graduated', 'volume'] as const) : null,
    tiers: pricing === 'tiered' ? tiersOf(g) : null,
    package_size: pricing === 'package' ? String(g.int(1, 500)) : null,
  };
  return { product, currency: g.pick(CODES), quantity: pricing === 'flat' ? String(g.int(1, 50)) : g.decimal(6, 3) };
}

/** The book of `currency` as the reference reads it, straight from the product's fields (not through the code). */
function referenceBook(p: ProductBooks, currency: string): RefModel | null {
  const option = p.currency === currency ? null : p.currency_options[currency];
  if (p.currency !== currency && !option) return null;
  if (p.pricing === 'tiered')
    return {
      pricing: 'tiered',
      tiers_mode: p.tiers_mode!,
      tiers: option && 'tiers' in option ? option.tiers : p.tiers!,
    };
  const price = option && 'price' in option ? option.price : p.price;
  if (p.pricing === 'package') return { pricing: 'package', price, package_size: p.package_size! };
  return { pricing: 'metered', price };
}

t.test('a product line in each currency is that book’s price, rounded to that currency’s minor unit', async (t) => {
  const failures = forAll(0x8601, RUNS, caseOf, (c) => {
    const model = productPriceIn(c.product, c.currency);
    const want = referenceBook(c.product, c.currency);
    if ((model === null) !== (want === null))
      return `book ${c.currency}: ${JSON.stringify(model)} vs ${JSON.stringify(want)}`;
    if (!model || !want) return null;
    const scale = SCALES[c.currency]!;
    const flat = c.product.pricing === 'flat';
    const inv = priceInvoice({
      subscription_id: 'sub',
      currency: c.currency,
      items: [
        {
          product_id: 'prod_x',
          product_name: 'X',
          model,
          minimum_amount: null,
          quantity: flat ? Number(c.quantity) : 1,
          service: null,
          meter: flat
            ? null
            : {
                id: 'mtr_x',
                aggregation: 'sum',
                unit: 'u',
                usage: { start: 0, end: 1, count: 1, sum: c.quantity },
              },
        },
      ],
    });
    const line = inv.lines[0]!;
    const expected = referencePrice(want, decimalQ(c.quantity), scale);
    if (toMinor(line.amount, scale) !== expected)
      return `${c.currency}: ${line.amount} ≠ ${fromMinor(expected, scale)}`;
    if (new Decimal(inv.amount).decimalPlaces() > scale) return `amount ${inv.amount} finer than ${c.currency}`;
    return null;
  });
  t.same(failures, []);
});

t.test('an amount_off coupon takes its amount in each of its currencies and nothing in others', async (t) => {
  const failures = forAll(
    0x8602,
    RUNS,
    (g) => {
      const own = g.pick(CODES);
      const options = Object.fromEntries(
        CODES.filter((c) => c !== own && g.bool(0.5)).map((c) => [c, { amount_off: String(g.int(1, 10 ** 6)) }]),
      );
      return {
        coupon: { percent_off: null, amount_off: String(g.int(1, 10 ** 6)), currency: own, currency_options: options },
        currency: g.pick(CODES),
        charges: String(g.int(0, 2 * 10 ** 6)),
      };
    },
    (c) => {
      const terms = couponTermsIn(c.coupon, c.currency);
      const amount =
        c.coupon.currency === c.currency ? c.coupon.amount_off : c.coupon.currency_options[c.currency]?.amount_off;
      if (amount === undefined) return terms === null ? null : `a discount in ${c.currency}, which it has no amount in`;
      if (!terms) return `no terms in ${c.currency}`;
      const got = discountOf(terms, new Decimal(c.charges), c.currency);
      const want = BigInt(amount) < BigInt(c.charges) ? BigInt(amount) : BigInt(c.charges);
      return got.eq(want.toString()) ? null : `${got} ≠ min(${amount}, ${c.charges})`;
    },
  );
  t.same(failures, []);
});

/** A per-dimension model with random books, as a product of the same pricing (referenceBook reads it so). */
function modelOf(g: Seeded, own: string): { model: DimensionPriceModel; asProduct: ProductBooks } {
  const pricing = g.pick(['metered', 'package', 'tiered'] as const);
  const options = Object.fromEntries(
    CODES.filter((c) => c !== own && g.bool(0.5)).map((c) => [
      c,
      pricing === 'tiered' ? { tiers: tiersOf(g) } : { price: g.decimal(4, 9) },
    ]),
  );
  const tiers_mode = g.pick(['graduated', 'volume'] as const);
  const tiers = tiersOf(g);
  const price = g.decimal(4, 9);
  const package_size = String(g.int(1, 500));
  const model: DimensionPriceModel =
    pricing === 'tiered'
      ? { pricing, tiers_mode, tiers, currency_options: options }
      : pricing === 'package'
        ? { pricing, price, package_size, currency_options: options }
        : { pricing, price, currency_options: options };
  const asProduct: ProductBooks = {
    currency: own,
    currency_options: options,
    pricing,
    price: pricing === 'tiered' ? '0' : price,
    tiers_mode: pricing === 'tiered' ? tiers_mode : null,
    tiers: pricing === 'tiered' ? tiers : null,
    package_size: pricing === 'package' ? package_size : null,
  };
  return { model, asProduct };
}

t.test('a plan item’s minimum and per-dimension prices are taken from the subscriber’s book only', async (t) => {
  const failures = forAll(
    0x8603,
    RUNS,
    (g) => {
      const own = g.pick(CODES);
      const minimum = g.bool(0.5);
      const models = minimum ? [] : Array.from({ length: g.int(1, 3) }, () => modelOf(g, own));
      const item: Item = {
        product_id: 'prod_x',
        meter_id: 'mtr_x',
        minimum_amount: minimum ? g.decimal(6, SCALES[own]!) : null,
        group_by: [],
        dimension_prices: minimum
          ? null
          : {
              dimension: 'model',
              prices: models.map((m, j) => ({ value: `v${j}`, price: m.model })),
              default_price: null,
            },
        ...(minimum
          ? {
              currency_options: Object.fromEntries(
                CODES.filter((c) => c !== own && g.bool(0.5)).map((c) => [
                  c,
                  { minimum_amount: g.decimal(6, SCALES[c]!) },
                ]),
              ),
            }
          : {}),
        quantity: 1,
      };
      return { own, item, models, currency: g.pick(CODES), usage: g.decimal(6, 3), price: g.decimal(2, 4) };
    },
    (c) => {
      const { item, missing } = planItemIn(c.item, c.own, c.currency);
      const wantMinimum =
        c.item.minimum_amount === null
          ? undefined
          : c.currency === c.own
            ? c.item.minimum_amount
            : c.item.currency_options?.[c.currency]?.minimum_amount;
      const wantMissing = [
        ...(c.item.minimum_amount !== null && wantMinimum === undefined ? ['minimum_amount'] : []),
        ...c.models.flatMap((m, j) => (referenceBook(m.asProduct, c.currency) ? [] : [`prices[${j}].price`])),
      ];
      if (JSON.stringify(missing) !== JSON.stringify(wantMissing))
        return `missing ${JSON.stringify(missing)} ≠ ${JSON.stringify(wantMissing)}`;
      if (JSON.stringify(item).includes('currency_options')) return 'books left on a subscription’s item';
      const scale = SCALES[c.currency]!;
      for (const [j, m] of c.models.entries()) {
        const want = referenceBook(m.asProduct, c.currency);
        if (!want) continue;
        const got = item.dimension_prices!.prices[j]!.price;
        const quantity = decimalQ(c.usage);
        if (referencePrice(got as RefModel, quantity, scale) !== referencePrice(want, quantity, scale))
          return `${c.currency}: value v${j} not priced by its ${c.currency} book`;
      }
      if (wantMinimum === undefined) return null;
      if (item.minimum_amount !== wantMinimum) return `minimum ${item.minimum_amount} ≠ ${wantMinimum}`;
      // The invoice trues the usage up to THAT minimum, to the minor unit.
      const inv = priceInvoice({
        subscription_id: 'sub',
        currency: c.currency,
        items: [
          {
            product_id: 'prod_x',
            product_name: 'X',
            model: { pricing: 'metered', price: c.price },
            minimum_amount: item.minimum_amount!,
            quantity: 1,
            service: null,
            meter: { id: 'mtr_x', aggregation: 'sum', unit: 'u', usage: { start: 0, end: 1, count: 1, sum: c.usage } },
          },
        ],
      });
      const usage = referencePrice({ pricing: 'metered', price: c.price }, decimalQ(c.usage), scale);
      const minimum = toMinor(wantMinimum, scale);
      const trueUp = inv.lines.find((l) => l.type === 'minimum_commitment');
      const want = minimum > usage ? minimum - usage : 0n;
      const got = trueUp ? toMinor(trueUp.amount, scale) : 0n;
      return got === want ? null : `${c.currency}: true-up ${got} ≠ ${want} (minimum ${wantMinimum})`;
    },
  );
  t.same(failures, []);
});
