import t from 'tap';
import { Decimal, roundToMinorUnit } from '../../shared/money/decimal.js';
import { CURRENCY_MINOR_UNITS, minorUnits } from '../../shared/money/currencies.js';
import type { WindowStats } from '../../services/domain/usage/stats.js';
import type { PriceModel } from '../../services/domain/pricing/price-models.js';
import {
  priceInvoice,
  sumOfLines,
  type InvoiceToPrice,
  type ItemToPrice,
} from '../../services/domain/pricing/invoice-lines.js';
import {
  prorated,
  proratedAmount,
  prorationText,
  serviceInterval,
  type ServiceInterval,
} from '../../services/domain/pricing/proration.js';
import { allocateCredits, type SpendableGrant } from '../../services/domain/billing/credits.js';
import { type Seeded, forAll } from './seeded.js';

// Invoice lines, proration and prepaid credit (services/domain/pricing/, services/domain/billing/credits.ts)
// without a server: amount = Σ lines, the parts of a period add up to the period, credit never overspends.

const CURRENCIES = Object.keys(CURRENCY_MINOR_UNITS);
const OCT = Date.UTC(2026, 9, 1);
const NOV = Date.UTC(2026, 10, 1);
const usage = (sum: string): WindowStats => ({ start: OCT, end: NOV, count: 1, sum });

function modelOf(g: Seeded): PriceModel {
  switch (g.int(0, 3)) {
    case 0:
      return { pricing: 'metered', price: g.decimal(2, 9) };
    case 1:
      return { pricing: 'package', price: g.decimal(2, 2), package_size: String(g.int(1, 1000)) };
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

/** An interval inside October, or null (the whole month). */
function intervalOf(g: Seeded): ServiceInterval | null {
  if (g.bool(0.6)) return null;
  const a = g.int(OCT, NOV);
  const b = g.int(OCT, NOV);
  return { fromMs: Math.min(a, b), toMs: Math.max(a, b), periodStartMs: OCT, periodEndMs: NOV };
}

function invoiceOf(g: Seeded): InvoiceToPrice {
  const items: ItemToPrice[] = Array.from({ length: g.int(1, 6) }, (_, i) => {
    const flat = g.bool(0.4);
    return {
      product_id: `prod_${i}`,
      product_name: `Product ${i}`,
      model: flat ? { pricing: 'flat', price: g.decimal(3, 9) } : modelOf(g),
      minimum_amount: !flat && g.bool(0.3) ? g.decimal(3, 2) : null,
      meter: flat ? null : { id: `mtr_${i}`, aggregation: 'sum', unit: 'calls', usage: usage(g.decimal(6, 3)) },
      quantity: flat ? g.int(1, 20) : undefined,
      service: intervalOf(g),
    };
  });
  return { subscription_id: 'sub_1', currency: g.pick(CURRENCIES), items };
}

t.test('invoice: amount = Σ lines, every line rounded to the minor unit, for generated invoices', async (t) => {
  const failures = forAll(25_101, 300, invoiceOf, (inv) => {
    const priced = priceInvoice(inv);
    if (!new Decimal(priced.amount).eq(sumOfLines(priced.lines))) return `amount ${priced.amount} ≠ Σ lines`;
    const e = minorUnits(inv.currency);
    const loose = priced.lines.find((l) => new Decimal(l.amount).decimalPlaces() > e);
    if (loose) return `line "${loose.description}" amount ${loose.amount} finer than ${e} decimals`;
    for (const item of inv.items) {
      const lines = priced.lines.filter((l) => l.product_id === item.product_id);
      const usageLine = lines.find((l) => l.type === 'usage');
      const trueUp = lines.find((l) => l.type === 'minimum_commitment');
      if (item.minimum_amount !== null && usageLine) {
        // with a minimum, the item costs at least the (pro-rated) minimum, rounded
        const minimum = item.service ? prorated(item.minimum_amount, item.service) : new Decimal(item.minimum_amount);
        const total = new Decimal(usageLine.amount).plus(trueUp?.amount ?? 0);
        if (total.lt(roundToMinorUnit(minimum, inv.currency))) return `item ${item.product_id} below its minimum`;
      }
      if (!item.meter) {
        const whole = new Decimal(item.model.pricing === 'flat' ? item.model.price : 0).times(item.quantity ?? 1);
        const want = item.service
          ? proratedAmount(whole, item.service, inv.currency)
          : roundToMinorUnit(whole, inv.currency);
        if (!want.eq(lines[0]!.amount)) return `flat ${item.product_id}: ${lines[0]!.amount} ≠ ${want}`;
      }
    }
    return null;
  });
  t.same(failures, []);
});

t.test('worked example: the invoice of docs/billing.md (68.18 USD)', async (t) => {
  const metered = (i: number, price: string, sum: string): ItemToPrice => ({
    product_id: `prod_${i}`,
    product_name: `P${i}`,
    model: { pricing: 'metered', price },
    minimum_amount: null,
    meter: { id: `mtr_${i}`, aggregation: 'sum', unit: 'u', usage: usage(sum) },
  });
  const priced = priceInvoice({
    subscription_id: 'sub_1',
    currency: 'USD',
    items: [
      {
        product_id: 'prod_plan',
        product_name: 'Pro plan',
        model: { pricing: 'flat', price: '49.99' },
        minimum_amount: null,
        meter: null,
      },
      metered(1, '0.001', '3495'),
      metered(2, '0.5', '7'),
      metered(3, '0.25', '12.5'),
      metered(4, '0.1', '55.55'),
      metered(5, '0.01', '250'),
    ],
  });
  t.same(
    priced.lines.map((l) => l.amount),
    ['49.99', '3.5', '3.5', '3.13', '5.56', '2.5'],
  );
  t.equal(priced.amount, '68.18');
});

t.test(
  're-pricing a period whose usage did not change bills nothing more; late usage bills the difference',
  async (t) => {
    const failures = forAll(
      25_102,
      200,
      (g) => ({ model: modelOf(g), sum: g.decimal(5, 2), late: g.decimal(3, 2) }),
      ({ model, sum, late }) => {
        const item = { product_id: 'p', product_name: 'P', model, minimum_amount: null };
        const first = priceInvoice({
          subscription_id: 's',
          currency: 'USD',
          items: [{ ...item, meter: { id: 'm', aggregation: 'sum', unit: 'u', usage: usage(sum) } }],
        }).lines[0]!;
        const adjust = (now: string) =>
          priceInvoice({
            subscription_id: 's',
            currency: 'USD',
            items: [],
            adjustments: [
              {
                ...item,
                meter: { id: 'm', aggregation: 'sum', unit: 'u', usage: usage(now) },
                invoice_id: 'inv_1',
                period_start: '2026-10-01',
                period_end: '2026-10-31',
                billed_quantity: first.quantity,
                billed_amount: first.amount,
              },
            ],
          });
        if (adjust(sum).lines.length) return 'an unchanged period got an adjustment';
        const grown = new Decimal(sum).plus(late).toFixed();
        const repriced = priceInvoice({
          subscription_id: 's',
          currency: 'USD',
          items: [{ ...item, meter: { id: 'm', aggregation: 'sum', unit: 'u', usage: usage(grown) } }],
        }).amount;
        const billed = new Decimal(first.amount).plus(adjust(grown).amount);
        return billed.eq(repriced) ? null : `billed ${billed} in all ≠ ${repriced} for the period as it is now`;
      },
    );
    t.same(failures, []);
  },
);

t.test('proration: the parts of a period add up to the whole period', async (t) => {
  const failures = forAll(
    25_103,
    300,
    (g) => {
      const cuts = Array.from({ length: g.int(1, 6) }, () => g.int(OCT + 1, NOV - 1)).sort((a, b) => a - b);
      return { cuts, amount: g.decimal(4, 9), currency: g.pick(CURRENCIES) };
    },
    ({ cuts, amount, currency }) => {
      const edges = [OCT, ...cuts, NOV];
      const parts = edges.slice(1).map((to, i) => serviceInterval(new Date(edges[i]!), new Date(to), OCT, NOV)!);
      const time = parts.reduce((s, p) => s + (p.toMs - p.fromMs), 0);
      if (time !== NOV - OCT) return `the parts cover ${time} ms of ${NOV - OCT}`;
      // Exact shares add up to the amount (to decimal.js's 60 significant digits: a third is not a finite decimal).
      const exact = parts.reduce((s, p) => s.plus(prorated(amount, p)), new Decimal(0));
      if (exact.minus(amount).abs().gt('1e-40')) return `exact shares add up to ${exact}`;
      // Each part is a line rounded on its own: together within half a minor unit per line of the whole.
      const lines = parts.reduce((s, p) => s.plus(proratedAmount(amount, p, currency)), new Decimal(0));
      const bound = new Decimal(10).pow(-minorUnits(currency)).div(2).times(parts.length);
      return lines.minus(roundToMinorUnit(amount, currency)).abs().lte(bound) ? null : `lines add up to ${lines}`;
    },
  );
  t.same(failures, []);
});

t.test('proration: intervals and what a line says (worked examples)', async (t) => {
  t.equal(serviceInterval(null, null, OCT, NOV), null, 'on all period: not pro-rated');
  t.equal(serviceInterval(new Date(OCT - 5), new Date(NOV + 5), OCT, NOV), null, 'on before and after: not pro-rated');
  const tenth = serviceInterval(new Date(Date.UTC(2026, 9, 10, 12)), null, OCT, NOV)!;
  t.same([tenth.fromMs, tenth.toMs], [Date.UTC(2026, 9, 10, 12), NOV]);
  t.equal(
    prorationText(tenth),
    'pro-rated 21 d 12 h of 31 d (2026-10-10 12:00:00 to 2026-11-01 00:00:00 UTC)',
    'docs/billing.md, Proration',
  );
  // Plan 10.00 × 3 seats from the 10th 12:00: 30 × 516 h / 744 h = 20.806451… → 20.81
  t.equal(proratedAmount('30', tenth, 'USD').toFixed(), '20.81');
  t.equal(proratedAmount('3000', tenth, 'JPY').toFixed(), '2081', '2,080.645… yen → 2,081');
  const none = serviceInterval(new Date(NOV), null, OCT, NOV)!;
  t.equal(none.toMs - none.fromMs, 0, 'starting at the end: nothing of the period');
  t.equal(proratedAmount('99', none, 'USD').toFixed(), '0');
});

const grant = (id: string, remaining: string, extra: Partial<SpendableGrant> = {}): SpendableGrant => ({
  id,
  account_id: 'acct_1',
  currency: 'USD',
  remaining,
  expires_at: null,
  created_at: new Date(OCT),
  ...extra,
});
const flatInvoice = (id: string, amount: string, currency = 'USD', account = 'acct_1') => ({
  invoice_id: id,
  account_id: account,
  priced: {
    subscription_id: 's',
    currency,
    amount,
    lines: [
      {
        type: 'flat' as const,
        product_id: 'p',
        meter_id: null,
        description: 'Plan',
        quantity: '1',
        unit_price: amount,
        amount,
        price_model: null,
        adjusts_invoice_id: null,
      },
    ],
  },
});

t.test('credits: worked example (docs/billing.md, Prepaid credits)', async (t) => {
  // grants of 30 (expiring) and 100 on a 49.99 monthly plan: October 0, November 0, December 19.97
  const grants = [grant('cred_b', '100'), grant('cred_a', '30', { expires_at: new Date(Date.UTC(2027, 0, 1)) })];
  const months = ['oct', 'nov', 'dec'].map((m) => flatInvoice(`inv_${m}`, '49.99'));
  for (const m of months) allocateCredits(grants, [m]);
  t.same(
    months.map((m) => m.priced.amount),
    ['0', '0', '19.97'],
  );
  t.equal(
    months[0]!.priced.lines[1]!.description,
    'Prepaid credit applied: 30 of cred_a (expires 2027-01-01), 19.99 of cred_b',
  );
  t.same(
    grants.map((g) => g.remaining),
    ['0', '0'],
  );
});

t.test('credits: never more than the invoice or the grant, soonest expiry first, amount = Σ lines', async (t) => {
  const failures = forAll(
    25_104,
    300,
    (g) => ({
      grants: Array.from({ length: g.int(0, 4) }, (_, i) =>
        grant(`cred_${i}`, g.decimal(3, 2), {
          currency: g.pick(['USD', 'EUR']),
          account_id: g.pick(['acct_1', 'acct_2']),
          expires_at: g.bool() ? new Date(OCT + g.int(0, 1e10)) : null,
          created_at: new Date(OCT - g.int(0, 1e10)),
        }),
      ),
      invoices: Array.from({ length: g.int(1, 4) }, (_, i) =>
        flatInvoice(`inv_${i}`, g.decimal(3, 2), g.pick(['USD', 'EUR']), g.pick(['acct_1', 'acct_2'])),
      ),
    }),
    ({ grants, invoices }) => {
      const before = new Map(grants.map((x) => [x.id, new Decimal(x.remaining)]));
      const due = new Map(invoices.map((i) => [i.invoice_id, new Decimal(i.priced.amount)]));
      const uses = allocateCredits(grants, invoices);
      for (const x of grants) {
        const spent = uses.filter((u) => u.grant_id === x.id).reduce((s, u) => s.plus(u.amount), new Decimal(0));
        if (new Decimal(x.remaining).lt(0)) return `${x.id} below 0`;
        if (!before.get(x.id)!.minus(spent).eq(x.remaining)) return `${x.id}: remaining ≠ before − spent`;
      }
      for (const inv of invoices) {
        const amount = new Decimal(inv.priced.amount);
        if (amount.lt(0)) return `${inv.invoice_id} below 0`;
        if (!amount.eq(sumOfLines(inv.priced.lines))) return `${inv.invoice_id}: amount ≠ Σ lines`;
        for (const u of uses.filter((u) => u.invoice_id === inv.invoice_id)) {
          const g = grants.find((x) => x.id === u.grant_id)!;
          if (g.account_id !== inv.account_id || g.currency !== inv.priced.currency)
            return 'credit crossed accounts or currencies';
        }
        // Left unpaid while a matching grant still had credit: the allocation stopped early.
        const spare = grants.some(
          (g) =>
            g.account_id === inv.account_id && g.currency === inv.priced.currency && new Decimal(g.remaining).gt(0),
        );
        if (amount.gt(0) && spare) return `${inv.invoice_id} left ${amount} due with credit to spare`;
        if (amount.gt(due.get(inv.invoice_id)!)) return 'credit raised an invoice';
      }
      return null;
    },
  );
  t.same(failures, []);
});
