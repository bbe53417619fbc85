import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { minorUnits } from '../../shared/money/currencies.js';
import type { BillingInterval, CouponDuration } from '../../shared/vocabulary.js';
import { discountOf } from '../../services/domain/coupons/discount.js';
import { couponReaches, type Redemption } from '../../services/domain/billing/coupon-periods.js';
import { scheduleOf } from '../../services/domain/subscriptions/periods.js';
import { allocateCredits, type SpendableGrant } from '../../services/domain/billing/credits.js';
import { thresholdInvoicesDue } from '../../services/domain/billing/threshold-due.js';
import { owesSomething } from '../../services/domain/billing/payments.js';
import { oneLinePerNonAdditiveItem } from '../../services/domain/billing/price-periods.js';
import type { PricedInvoice } from '../../services/domain/pricing/invoice-lines.js';
import { Seeded, forAll } from './seeded.js';

// Money across periods (issue 41), without a server, seeded: each property runs ≥ 10,000 generated cases against a
// reference written here with exact rationals (BigInt fractions) and plain month arithmetic — not the code's own
// helpers — across JPY, USD and KWD.

const RUNS = 10_000;
const CURRENCIES = ['JPY', 'USD', 'KWD'] as const;

/** An exact rational n/d (d > 0) on BigInt. */
class Q {
  constructor(
    readonly n: bigint,
    readonly d: bigint = 1n,
  ) {}
  static of(text: string): Q {
    const neg = text.startsWith('-');
    const [int, frac = ''] = text.replace('-', '').split('.');
    const n = BigInt(int! + frac) * (neg ? -1n : 1n);
    return new Q(n, 10n ** BigInt(frac.length));
  }
  plus(o: Q): Q {
    return new Q(this.n * o.d + o.n * this.d, this.d * o.d);
  }
  minus(o: Q): Q {
    return this.plus(new Q(-o.n, o.d));
  }
  times(o: Q): Q {
    return new Q(this.n * o.n, this.d * o.d);
  }
  cmp(o: Q): number {
    const x = this.n * o.d - o.n * this.d;
    return x < 0n ? -1 : x > 0n ? 1 : 0;
  }
  min(o: Q): Q {
    return this.cmp(o) <= 0 ? this : o;
  }
  max(o: Q): Q {
    return this.cmp(o) >= 0 ? this : o;
  }
  /** Rounded half to even to `places` decimals. */
  halfEven(places: number): Q {
    const scale = 10n ** BigInt(places);
    const num = this.n * scale;
    let q = num / this.d;
    let r = num % this.d;
    if (r < 0n) {
      q -= 1n;
      r += this.d;
    }
    const twice = 2n * r;
    if (twice > this.d || (twice === this.d && q % 2n !== 0n)) q += 1n;
    return new Q(q, scale);
  }
  eqText(text: string): boolean {
    return this.cmp(Q.of(text)) === 0;
  }
}
const ZERO = new Q(0n);

/** An amount in whole minor units of the currency, as text (charges are sums of rounded lines). */
function money(g: Seeded, currency: string, maxUnits: number): string {
  const places = minorUnits(currency);
  const units = g.int(0, maxUnits);
  if (places === 0) return String(units);
  const s = String(units).padStart(places + 1, '0');
  return `${s.slice(0, -places)}.${s.slice(-places)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. A coupon never discounts one period twice nor more than its charges.

const DAY = 86_400_000;
const monthIndex = (ms: number) => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
};
const monthStart = (index: number) => Date.UTC(Math.floor(index / 12), index % 12, 1);

interface PlanCase {
  interval: BillingInterval;
  interval_count: number;
  createdMs: number;
  trialEndMs: number | null;
  flat: boolean;
  usage: boolean;
  currency: string;
  redemptions: {
    duration: CouponDuration;
    n: number | null;
    percent: string | null;
    amount: string | null;
    atMs: number;
    endMs: number | null;
  }[];
  /** Charges of each invoice, by key: `a<month index>` (advance) or `u<month index>` (usage). */
  charges: (key: string) => string;
}

const MONTHS_PER: Record<string, number> = { month: 1, quarter: 3, year: 12 };

function genPlan(g: Seeded): PlanCase {
  const interval = g.pick(['month', 'month', 'quarter', 'year'] as const);
  const interval_count = interval === 'month' ? g.pick([1, 1, 2, 3, 6]) : g.int(1, 2);
  const createdMs = Date.UTC(2025, 0, 1) + g.int(0, 700) * DAY + g.int(0, 86_399) * 1000;
  const trialEndMs = g.bool(0.2) ? createdMs + g.int(1, 60) * DAY : null;
  const flat = g.bool(0.8);
  const usage = !flat || g.bool(0.75);
  const currency = g.pick(CURRENCIES);
  const redemptions: PlanCase['redemptions'] = [];
  let at = createdMs + (g.bool(0.4) ? 0 : g.int(0, 400) * DAY + g.int(0, 86_399) * 1000);
  for (let k = g.int(1, 3); k > 0; k--) {
    const duration = g.pick(['once', 'once', 'repeating', 'forever'] as const);
    const percent = g.bool() ? String(g.int(1, 100)) : null;
    const r = {
      duration,
      n: duration === 'repeating' ? g.int(1, 14) : null,
      percent,
      amount: percent === null ? money(g, currency, 5000) : null,
      atMs: at,
      endMs: null as number | null,
    };
    if (r.amount !== null && Q.of(r.amount).cmp(ZERO) === 0) r.amount = '1';
    redemptions.push(r);
    at += g.int(0, 300) * DAY + g.int(0, 86_399) * 1000;
    // Replaced by the next one at that instant, or removed then (and the next one applied later).
    if (k > 1 || g.bool(0.3)) r.endMs = at;
    if (g.bool(0.3)) at += g.int(1, 90) * DAY;
  }
  // Each invoice's charges, drawn when asked for (only discounted invoices need them), the same for the same case.
  const seed = g.int(0, 2 ** 31);
  const charges = (key: string) => {
    const h = new Seeded(seed ^ (Number(key.slice(1)) * 2 + (key[0] === 'a' ? 1 : 0)));
    return key[0] === 'u' && h.bool(0.15) ? '0' : money(h, currency, key[0] === 'a' ? 200_000 : 20_000);
  };
  return { interval, interval_count, createdMs, trialEndMs, flat, usage, currency, redemptions, charges };
}

interface Issued {
  key: string;
  dueMs: number;
  advance: boolean;
  startMs: number;
  month: number;
}

/** Months of invoices looked at per case. */
const MONTHS = 30;

/** The subscription's invoices over its first MONTHS months, in the order the billing run issues them (plain arithmetic). */
function invoicesOf(c: PlanCase): Issued[] {
  const startsAt = c.trialEndMs ?? c.createdMs;
  const per = MONTHS_PER[c.interval]! * c.interval_count;
  const firstMonth = monthIndex(startsAt);
  // The first period: the calendar interval containing the start (month, quarter from January, year).
  const p0 = c.interval === 'month' ? firstMonth : firstMonth - (firstMonth % MONTHS_PER[c.interval]!);
  const out: Issued[] = [];
  const long = per > 1;
  for (let m = firstMonth; m < firstMonth + MONTHS; m++) {
    const isPeriodStart = (m - p0) % per === 0;
    if (long && c.flat && (m === firstMonth || isPeriodStart)) {
      const periodStart = m === firstMonth ? monthStart(p0) : monthStart(m);
      out.push({
        key: `a${m}`,
        dueMs: Math.max(periodStart, startsAt),
        advance: true,
        startMs: periodStart,
        month: m,
      });
    }
    // A monthly plan's invoice holds its flat items too; a long plan's usage month exists with usage items only.
    if (!long || c.usage)
      out.push({ key: `u${m}`, dueMs: monthStart(m + 1), advance: false, startMs: monthStart(m), month: m });
  }
  return out.sort((x, y) => x.dueMs - y.dueMs || Number(y.advance) - Number(x.advance));
}

/** The reference rule (docs/coupons.md "Which invoices"), on month indexes. */
function referenceCoupon(c: PlanCase, inv: Issued, used: Set<number>): number | null {
  const startsAt = c.trialEndMs ?? c.createdMs;
  const unitOf = (ms: number) => Math.max(monthIndex(ms), monthIndex(startsAt));
  for (let k = c.redemptions.length - 1; k >= 0; k--) {
    const r = c.redemptions[k]!;
    const u = unitOf(r.atMs);
    let unit: number;
    if (inv.advance) {
      if (inv.dueMs < r.atMs || (r.endMs !== null && inv.dueMs >= r.endMs)) continue;
      unit = monthIndex(inv.dueMs);
    } else {
      if (inv.month < u || (r.endMs !== null && inv.month >= unitOf(r.endMs))) continue;
      unit = inv.month;
    }
    if (r.duration === 'repeating' && unit - u >= r.n!) continue;
    if (r.duration === 'once' && used.has(k)) continue;
    return k;
  }
  return null;
}

/** The code's rule: couponReaches per redemption (latest first), `once` limited to the first invoice carrying it. */
function codeRule(c: PlanCase): (inv: Issued, used: Set<number>) => number | null {
  const schedule = scheduleOf({
    created_at: new Date(c.createdMs),
    trial_end: c.trialEndMs === null ? null : new Date(c.trialEndMs),
    interval: c.interval,
    interval_count: c.interval_count,
    billing_anchor: 'calendar',
  });
  const startsAt = c.trialEndMs ?? c.createdMs;
  const usageStart = (ms: number) => new Date(monthStart(Math.max(monthIndex(ms), monthIndex(startsAt))));
  const redemptions: Redemption[] = c.redemptions.map((x) => ({
    duration: x.duration,
    duration_in_periods: x.n,
    first_period_start: usageStart(x.atMs),
    redeemed_at: new Date(x.atMs),
    ended_at: x.endMs === null ? null : new Date(x.endMs),
    ended_period_start: x.endMs === null ? null : usageStart(x.endMs),
  }));
  return (inv, used) => {
    for (let k = redemptions.length - 1; k >= 0; k--) {
      if (redemptions[k]!.duration === 'once' && used.has(k)) continue;
      if (couponReaches(redemptions[k]!, schedule, { startMs: inv.startMs, advance: inv.advance })) return k;
    }
    return null;
  };
}

t.test('a coupon never discounts one period twice nor more than its charges', async (t) => {
  let discounted = 0;
  const failures = forAll(41_001, RUNS, genPlan, (c) => {
    const invoices = invoicesOf(c);
    const codeCoupon = codeRule(c);
    const usedCode = new Set<number>();
    const usedRef = new Set<number>();
    const perRedemption = new Map<number, Issued[]>();
    const seen = new Set<string>();
    for (const inv of invoices) {
      if (seen.has(inv.key)) return `invoice ${inv.key} issued twice`;
      seen.add(inv.key);
      const code = codeCoupon(inv, usedCode);
      const ref = referenceCoupon(c, inv, usedRef);
      if (code !== ref) return `${inv.key}: the code picks redemption ${code}, the reference ${ref}`;
      if (code === null) continue;
      usedCode.add(code);
      usedRef.add(code);
      perRedemption.set(code, [...(perRedemption.get(code) ?? []), inv]);
      const r = c.redemptions[code]!;
      const charges = c.charges(inv.key);
      const terms = { percent_off: r.percent, amount_off: r.amount };
      const got = discountOf(terms, new Decimal(charges), c.currency).toString();
      const q = Q.of(charges);
      const want =
        q.cmp(ZERO) <= 0
          ? ZERO
          : r.percent !== null
            ? q.times(new Q(BigInt(r.percent), 100n)).halfEven(minorUnits(c.currency))
            : Q.of(r.amount!).min(q);
      if (!want.eqText(got)) return `${inv.key}: discount ${got}, reference ${want.n}/${want.d}`;
      if (Q.of(got).cmp(q.max(ZERO)) > 0 || Q.of(got).cmp(ZERO) < 0) return `${inv.key}: ${got} outside 0…${charges}`;
      if (Q.of(got).cmp(ZERO) > 0) discounted++;
    }
    for (const [k, list] of perRedemption) {
      const r = c.redemptions[k]!;
      if (r.duration === 'once' && list.length > 1) return `once discounted ${list.map((i) => i.key)}`;
      const months = list.filter((i) => !i.advance).map((i) => i.month);
      if (r.duration === 'repeating' && months.length > r.n!) return `repeating ${r.n} discounted months ${months}`;
    }
    return null;
  });
  t.same(failures, [], `${RUNS} plans, their invoices over 30 months`);
  t.ok(discounted > RUNS, `the cases discount something (${discounted} invoices)`);
});

// ---------------------------------------------------------------------------------------------------------------
// 2. A period's advance, threshold and usage invoices sum to what one invoice for the period would bill.

interface MonthCase {
  currency: string;
  /** Usage charges priced so far at each threshold check (non-decreasing), the last one the month in full. */
  soFar: string[];
  threshold: string;
  credit: string;
  flat: string;
}

function genMonth(g: Seeded): MonthCase {
  const currency = g.pick(CURRENCIES);
  const steps = g.int(1, 8);
  const soFar: string[] = [];
  let total = ZERO;
  for (let i = 0; i < steps; i++) {
    total = total.plus(Q.of(money(g, currency, g.bool(0.2) ? 0 : 30_000)));
    const places = minorUnits(currency);
    soFar.push(decimalText(total, places));
  }
  let threshold = money(g, currency, 40_000);
  if (Q.of(threshold).cmp(ZERO) === 0) threshold = '1';
  return {
    currency,
    soFar,
    threshold,
    credit: g.bool(0.5) ? '0' : money(g, currency, 60_000),
    flat: money(g, currency, 100_000),
  };
}

function decimalText(q: Q, places: number): string {
  const scaled = (q.n * 10n ** BigInt(places)) / q.d;
  const neg = scaled < 0n;
  const s = (neg ? -scaled : scaled).toString().padStart(places + 1, '0');
  const body = places === 0 ? s : `${s.slice(0, -places)}.${s.slice(-places)}`;
  return neg ? `-${body}` : body;
}

const priced = (amount: string, currency: string): PricedInvoice => ({
  subscription_id: 'sub',
  currency,
  amount,
  lines: [
    {
      type: 'usage',
      product_id: 'p',
      meter_id: 'm',
      description: '',
      quantity: '1',
      unit_price: amount,
      amount,
      price_model: null,
      adjusts_invoice_id: null,
    },
  ],
});

t.test(
  "a period's advance, threshold and usage invoices sum to what one invoice for the period would bill",
  async (t) => {
    let thresholdInvoices = 0;
    const failures = forAll(41_002, RUNS, genMonth, (c) => {
      const places = minorUnits(c.currency);
      const grants: SpendableGrant[] = [
        {
          id: 'g',
          account_id: 'a',
          currency: c.currency,
          remaining: c.credit,
          expires_at: null,
          created_at: new Date(0),
        },
      ];
      const issued: string[] = [];
      // The advance invoice (flat items in full) takes credit first, as the billing run issues it at the period's start.
      const advance = priced(c.flat, c.currency);
      allocateCredits(grants, [{ invoice_id: 'adv', account_id: 'a', priced: advance }]);
      issued.push(advance.amount);
      // Threshold checks during the month: what is not yet billed = so far − Σ earlier threshold subtotals.
      let billedSubtotal = ZERO;
      for (const [i, s] of c.soFar.slice(0, -1).entries()) {
        const notYet = Q.of(s).minus(billedSubtotal);
        if (notYet.cmp(ZERO) <= 0) continue;
        const candidate = priced(decimalText(notYet, places), c.currency);
        const { due } = thresholdInvoicesDue(grants, [
          { invoice_id: `th${i}`, account_id: 'a', priced: candidate, threshold: c.threshold },
        ]);
        if (!due[0]) continue;
        if (!owesSomething(candidate.amount)) return `threshold invoice issued at ${candidate.amount}`;
        if (Q.of(candidate.amount).cmp(Q.of(c.threshold)) < 0) return `issued ${candidate.amount} below ${c.threshold}`;
        thresholdInvoices++;
        issued.push(candidate.amount);
        billedSubtotal = billedSubtotal.plus(notYet);
      }
      // The final invoice: the month in full less the threshold subtotals (never below zero: usage only grows here).
      const final = priced(decimalText(Q.of(c.soFar.at(-1)!).minus(billedSubtotal), places), c.currency);
      allocateCredits(grants, [{ invoice_id: 'final', account_id: 'a', priced: final }]);
      issued.push(final.amount);
      // One invoice for the period: flat + the month's usage, less the credit it could take.
      const whole = Q.of(c.flat).plus(Q.of(c.soFar.at(-1)!));
      const want = whole.minus(Q.of(c.credit).min(whole));
      const got = issued.reduce((s, a) => s.plus(Q.of(a)), ZERO);
      if (got.cmp(want) !== 0)
        return `Σ invoices ${decimalText(got, places)} ≠ one invoice ${decimalText(want, places)}`;
      if (issued.some((a) => Q.of(a).cmp(ZERO) < 0)) return `an invoice below zero: ${issued}`;
      const left = Q.of(grants[0]!.remaining);
      if (left.cmp(ZERO) < 0) return `credit overspent: ${grants[0]!.remaining}`;
      return null;
    });
    t.same(failures, [], `${RUNS} periods with an advance invoice, threshold checks and a final invoice`);
    t.ok(thresholdInvoices > RUNS / 4, `threshold invoices were issued (${thresholdInvoices})`);
  },
);

t.test("an item's versions on a non-additive meter are billed as one usage line per contiguous run", async (t) => {
  const aggregations = ['sum', 'count', 'max', 'min', 'last', 'avg', 'unique_count', 'p95'];
  const failures = forAll(
    41_003,
    RUNS,
    (g) => {
      const rows: {
        product_id: string;
        meter_id: string | null;
        aggregation: string | null;
        effective_from: Date | null;
        effective_to: Date | null;
      }[] = [];
      for (let item = 0; item < g.int(1, 3); item++) {
        const metered = g.bool(0.8);
        const aggregation = metered ? g.pick(aggregations) : null;
        let from: number | null = g.bool() ? null : g.int(0, 5);
        for (let v = g.int(1, 4); v > 0; v--) {
          const to: number | null = v === 1 && g.bool() ? null : (from ?? 0) + g.int(1, 5);
          rows.push({
            product_id: `p${item}`,
            meter_id: metered ? `m${item}` : null,
            aggregation,
            effective_from: from === null ? null : new Date(from * DAY),
            effective_to: to === null ? null : new Date(to * DAY),
          });
          if (to === null) break;
          from = g.bool(0.8) ? to : to + g.int(1, 3);
        }
      }
      return g.bool() ? rows.reverse() : rows;
    },
    (rows) => {
      const out = oneLinePerNonAdditiveItem(rows);
      // Reference: per item, the time each version covers, as day sets; non-additive items' lines are the contiguous
      // runs of versions (a gap starts a new line), additive and flat ones keep every version.
      const days = (r: (typeof rows)[number]) => {
        const a = r.effective_from === null ? -1 : r.effective_from.getTime() / DAY;
        const b = r.effective_to === null ? 40 : r.effective_to.getTime() / DAY;
        return Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i);
      };
      for (const p of new Set(rows.map((r) => r.product_id))) {
        const ins = rows.filter((r) => r.product_id === p);
        const outs = out.filter((r) => r.product_id === p);
        const covered = (list: typeof rows) => list.flatMap(days).sort((x, y) => x - y);
        if (covered(ins).join() !== covered(outs).join()) return `${p}: the time billed changed`;
        const additive = ins[0]!.meter_id === null || ['sum', 'count'].includes(ins[0]!.aggregation!);
        const sorted = [...ins].sort(
          (x, y) => (x.effective_from?.getTime() ?? -1) - (y.effective_from?.getTime() ?? -1),
        );
        const runs = sorted.filter(
          (r, i) => i === 0 || sorted[i - 1]!.effective_to?.getTime() !== r.effective_from?.getTime(),
        ).length;
        const want = additive ? ins.length : runs;
        if (outs.length !== want) return `${p}: ${outs.length} lines, want ${want}`;
        if (!additive) {
          // Each line is priced with the last version of its run.
          const lasts = sorted.filter(
            (r, i) => i === sorted.length - 1 || r.effective_to?.getTime() !== sorted[i + 1]!.effective_from?.getTime(),
          );
          if (
            lasts
              .map((r) => r.effective_to?.getTime())
              .sort()
              .join() !==
            outs
              .map((r) => r.effective_to?.getTime())
              .sort()
              .join()
          )
            return `${p}: not priced with each run's last version`;
        }
      }
      return null;
    },
  );
  t.same(failures, [], `${RUNS} item histories`);
});

// ---------------------------------------------------------------------------------------------------------------
// 3. The payment pass never charges 0.

interface PassCase {
  currency: string;
  credit: string[];
  subs: { amount: string; threshold: string; account: string }[];
  credited: string[];
}

function genPass(g: Seeded): PassCase {
  const currency = g.pick(CURRENCIES);
  const n = g.int(1, 6);
  return {
    currency,
    credit: Array.from({ length: g.int(0, 3) }, () => money(g, currency, 50_000)),
    subs: Array.from({ length: n }, () => ({
      amount: g.bool(0.1) ? '0' : money(g, currency, 40_000),
      threshold: money(g, currency, 30_000).replace(/^0(\.0+)?$/, '1'),
      account: g.pick(['a', 'b']),
    })),
    credited: Array.from({ length: n }, () => (g.bool(0.3) ? money(g, currency, 40_000) : '0')),
  };
}

t.test('the payment pass never charges 0', async (t) => {
  let charged = 0;
  const failures = forAll(41_004, RUNS, genPass, (c) => {
    const grants: SpendableGrant[] = c.credit.map((remaining, i) => ({
      id: `g${i}`,
      account_id: i % 2 ? 'b' : 'a',
      currency: c.currency,
      remaining,
      expires_at: null,
      created_at: new Date(i),
    }));
    const before = new Map(grants.map((g) => [g.id, Q.of(g.remaining)]));
    const candidates = c.subs.map((s, i) => ({
      invoice_id: `inv${i}`,
      account_id: s.account,
      priced: priced(s.amount, c.currency),
      threshold: s.threshold,
    }));
    const { due, uses } = thresholdInvoicesDue(grants, candidates);
    // Reference: in turn, each subscription's amount less the credit left on its account; issued iff ≥ threshold.
    const left = new Map<string, Q>();
    for (const g of c.credit.map((r, i) => ({ account: i % 2 ? 'b' : 'a', r: Q.of(r) })))
      left.set(g.account, (left.get(g.account) ?? ZERO).plus(g.r));
    for (const [i, s] of c.subs.entries()) {
      const credit = left.get(s.account) ?? ZERO;
      const owed = Q.of(s.amount);
      const take = owed.min(credit).max(ZERO);
      const after = owed.minus(take);
      const isDue = after.cmp(ZERO) > 0 && after.cmp(Q.of(s.threshold)) >= 0;
      if (isDue !== due[i]) return `sub ${i}: due ${due[i]}, reference ${isDue}`;
      if (!isDue) continue;
      left.set(s.account, credit.minus(take));
      // Issued at exactly the amount checked; the credit it took is what it is issued with.
      if (Q.of(candidates[i]!.priced.amount).cmp(after) !== 0)
        return `sub ${i}: issued at ${candidates[i]!.priced.amount}, checked at ${decimalText(after, 3)}`;
      const took = uses.filter((u) => u.invoice_id === `inv${i}`).reduce((s2, u) => s2.plus(Q.of(u.amount)), ZERO);
      if (took.cmp(take) !== 0)
        return `sub ${i}: took ${decimalText(took, 3)} of credit, reference ${decimalText(take, 3)}`;
      // The payment pass: what it would charge, after any credit note.
      const amountDue = Q.of(candidates[i]!.priced.amount).minus(
        Q.of(c.credited[i]!).min(Q.of(candidates[i]!.priced.amount)),
      );
      const text = decimalText(amountDue, minorUnits(c.currency));
      if (owesSomething(text) !== amountDue.cmp(ZERO) > 0) return `owesSomething(${text}) wrong`;
      if (owesSomething(text)) charged++;
    }
    for (const g of grants) {
      const spent = before.get(g.id)!.minus(Q.of(g.remaining));
      if (Q.of(g.remaining).cmp(ZERO) < 0 || spent.cmp(ZERO) < 0) return `grant ${g.id} at ${g.remaining}`;
    }
    const spent = grants.reduce((s, g) => s.plus(before.get(g.id)!.minus(Q.of(g.remaining))), ZERO);
    const used = uses.reduce((s, u) => s.plus(Q.of(u.amount)), ZERO);
    if (spent.cmp(used) !== 0) return 'grants spent ≠ credit on the invoices issued';
    return null;
  });
  t.same(failures, [], `${RUNS} threshold passes and their charges`);
  t.ok(charged > RUNS / 4, `charges made (${charged})`);
  t.notOk(owesSomething('0'));
  t.notOk(owesSomething('-0.01'));
  t.ok(owesSomething('0.001'));
});
