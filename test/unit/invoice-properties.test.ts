import t from 'tap';
import { invoiceAmounts } from '../../services/domain/billing/invoice-amounts.js';
import { allocateCredits } from '../../services/domain/billing/credits.js';
import { excessAsCredit } from '../../services/domain/billing/deductions.js';
import type { LineType } from '../../shared/vocabulary.js';
import type { PricedInvoice, PricedLine } from '../../services/domain/pricing/invoice-lines.js';
import type { TaxProfile, TaxRateRow } from '../../services/domain/tax/types.js';
import type { CreditRequest } from '../../services/domain/credit-notes/types.js';
import { creditState, takeNote } from './credit-notes-sim.js';
import { forAll, type Seeded } from './seeded.js';
import { fromMinor, largestRemainder, percent, referenceLineTaxes, toMinor, type Q } from './money-reference.js';

// Property tests of the invoice-amount pipeline (issue 41, Deliver 3): random invoices of every kind in JPY, USD and
// KWD through the chain the billing paths run — invoiceAmounts (discounts attached per line, tax per line and rate),
// excessAsCredit (never below zero), allocateCredits (prepaid credit) — and credit notes on them (creditLinesOf),
// checked against a reference written here in exact BigInt rationals (test/unit/money-reference.ts).
// Each invoice of the first test is held to two invariants (its amounts, each line's tax); the third test credits
// its own 10,000. About 4 s of CPU in all; the timeout leaves room for a loaded machine.
// METERLINE_PROPERTY_RUNS raises the number of invoices per invariant (default 10,000); seeds are fixed.

const RUNS = Math.max(10_000, Number(process.env.METERLINE_PROPERTY_RUNS ?? 0) || 0);
t.setTimeout(300_000);
const CURRENCIES = [
  ['JPY', 0],
  ['USD', 2],
  ['KWD', 3],
] as const;
const KINDS = ['close', 'advance', 'threshold', 'draft', 'upcoming', 'late_usage'] as const;
type Kind = (typeof KINDS)[number];
const PRODUCTS = ['prod_a', 'prod_b', 'prod_c'];

interface RefRate {
  row: TaxRateRow;
  pct: Q;
  inclusive: boolean;
}

interface Case {
  kind: Kind;
  currency: string;
  scale: number;
  exempt: boolean;
  /** The rates of each product, and (key '') the customer's defaults, which tax one-off lines. */
  rates: Record<string, RefRate[]>;
  pool: RefRate[];
  /** Input lines in minor units, as the pricing and discount steps leave them. */
  lines: {
    type: LineType;
    product: string | null;
    amount: bigint;
    quantity: string;
    adjusts: string | null;
    taxes?: { rate: number; amount: bigint; base: bigint }[];
  }[];
  grant: bigint;
}

function makeRate(g: Seeded, i: number): RefRate {
  // 0–30 % with up to 4 decimals.
  const whole = g.int(0, 30);
  const frac = g.bool(0.5) ? '' : `.${String(g.int(0, 9999)).padStart(4, '0').replace(/0+$/, '') || '0'}`;
  const text = `${whole}${frac === '.0' ? '' : frac}`;
  const inclusive = g.bool(0.3);
  return {
    row: {
      id: `txr_${i}`,
      name: `R${i}`,
      percentage: text,
      country: 'FR',
      region: null,
      inclusive,
      archived_at: null,
      created_at: new Date(0),
    },
    pct: percent(text),
    inclusive,
  };
}

/** A random amount in minor units: mostly small, sometimes up to 10^9 units. */
const amountOf = (g: Seeded) => BigInt(g.int(0, 10 ** g.int(0, 6))) * BigInt(10 ** g.int(0, 3));

function generate(g: Seeded, only?: Kind[]): Case {
  const [currency, scale] = g.pick(CURRENCIES);
  const kind = g.pick(only ?? KINDS);
  const pool = Array.from({ length: 4 }, (_, i) => makeRate(g, i));
  const pickRates = () => {
    const n = g.int(0, 2);
    const chosen = new Set<number>();
    while (chosen.size < n) chosen.add(g.int(0, pool.length - 1));
    return [...chosen].map((i) => pool[i]!);
  };
  const products = PRODUCTS.slice(0, g.int(1, 3));
  const rates: Record<string, RefRate[]> = { '': pickRates() };
  for (const p of products) rates[p] = pickRates();
  const lines: Case['lines'] = [];
  const quantity = () => (g.bool() ? String(g.int(1, 6)) : `${g.int(0, 5)}.${g.int(1, 9)}`);
  for (const p of products) {
    const types: LineType[] = kind === 'advance' ? ['flat'] : ['flat', 'usage', 'minimum_commitment'];
    const n = g.int(1, kind === 'advance' ? 1 : 3);
    let charged = 0n;
    for (let i = 0; i < n; i++) {
      const amount = amountOf(g);
      charged += amount;
      lines.push({ type: g.pick(types), product: p, amount, quantity: quantity(), adjusts: null });
    }
    if (kind === 'late_usage' && g.bool(0.7)) {
      let adjusted = 0n;
      for (let i = g.int(1, 2); i > 0; i--) {
        const amount = amountOf(g) * (g.bool() ? 1n : -1n);
        adjusted += amount;
        lines.push({ type: 'adjustment', product: p, amount, quantity: quantity(), adjusts: 'inv_old' });
      }
      // The coupon of that period: more discount on more usage, some given back on less.
      if (adjusted !== 0n && g.bool(0.6)) {
        const abs = adjusted < 0n ? -adjusted : adjusted;
        const d = BigInt(g.int(0, Number(abs > 10n ** 12n ? 10n ** 12n : abs)));
        if (d)
          lines.push({
            type: 'discount',
            product: p,
            amount: adjusted > 0n ? -d : d,
            quantity: '1',
            adjusts: 'inv_old',
          });
      }
    }
    if (charged > 0n && g.bool(0.6)) {
      const d = BigInt(Math.floor(g.next() * Number(charged + 1n)));
      const capped = d > charged ? charged : d;
      if (capped) lines.push({ type: 'discount', product: p, amount: -capped, quantity: '1', adjusts: null });
    }
  }
  if (kind === 'draft')
    for (let i = g.int(0, 2); i > 0; i--)
      lines.push({ type: 'one_off', product: null, amount: amountOf(g), quantity: quantity(), adjusts: null });
  if (kind !== 'advance' && g.bool(0.3)) {
    // A threshold invoice of the period deducted: minus its subtotal and the tax it billed at a rate.
    const base = amountOf(g);
    const rate = g.int(0, pool.length - 1);
    lines.push({
      type: 'deduction',
      product: null,
      amount: -base,
      quantity: '1',
      adjusts: 'inv_threshold',
      taxes: [{ rate, amount: -BigInt(g.int(0, Number(base < 10n ** 9n ? base : 10n ** 9n) / 4)), base: -base }],
    });
  }
  // Shuffle a little: discount and charge lines need not be adjacent.
  for (let i = lines.length - 1; i > 0; i--) {
    if (!g.bool(0.3)) continue;
    const j = g.int(0, i);
    [lines[i], lines[j]] = [lines[j]!, lines[i]!];
  }
  return { kind, currency, scale, exempt: g.bool(0.1), rates, pool, lines, grant: g.bool(0.4) ? amountOf(g) : 0n };
}

function pricedOf(c: Case): PricedInvoice {
  const lines: PricedLine[] = c.lines.map((l) => ({
    type: l.type,
    product_id: l.product,
    meter_id: null,
    description: l.type,
    quantity: l.quantity,
    unit_price: fromMinor(l.amount, c.scale),
    amount: fromMinor(l.amount, c.scale),
    price_model: null,
    adjusts_invoice_id: l.adjusts,
    ...(l.taxes
      ? {
          taxes: l.taxes.map((t) => ({
            tax_rate_id: c.pool[t.rate]!.row.id,
            amount: fromMinor(t.amount, c.scale),
            base: fromMinor(t.base, c.scale),
          })),
        }
      : {}),
  }));
  const amount = c.lines.reduce((s, l) => s + l.amount, 0n);
  return { subscription_id: 'sub_x', currency: c.currency, amount: fromMinor(amount, c.scale), lines };
}

const PROFILE = (c: Case): TaxProfile => ({ tax_exempt: c.exempt ? 'exempt' : 'none', country: 'FR', region: null });

/** The chain every billing path runs, on a copy: tax, never below zero, prepaid credit. */
function runPipeline(c: Case) {
  const priced = pricedOf(c);
  const totals = invoiceAmounts(
    priced,
    PROFILE(c),
    (product) => (c.rates[product ?? ''] ?? []).map((r) => r.row),
    (id) => c.pool.find((r) => r.row.id === id)?.row,
  );
  const preCredit = toMinor(priced.amount, c.scale);
  if (c.kind !== 'advance' && c.kind !== 'threshold')
    excessAsCredit([{ invoice_id: 'inv_x', account_id: 'acc', priced, periodStart: '2026-01-01' }], { preview: true });
  if (c.grant > 0n)
    allocateCredits(
      [
        {
          id: 'cred_1',
          account_id: 'acc',
          currency: c.currency,
          remaining: fromMinor(c.grant, c.scale),
          expires_at: null,
          created_at: new Date(0),
        },
      ],
      [{ invoice_id: 'inv_x', account_id: 'acc', priced }],
    );
  return { priced, totals, preCredit };
}

/** The reference: each input line's attached discount, taxable amount and tax per rate (minor units). */
function reference(c: Case) {
  const attached = c.lines.map(() => 0n);
  c.lines.forEach((d) => {
    if (d.type !== 'discount' || d.product === null || d.amount === 0n) return;
    const targets = c.lines.flatMap((l, i) =>
      l.product === d.product &&
      (d.adjusts === null
        ? l.adjusts === null && ['flat', 'usage', 'minimum_commitment'].includes(l.type)
        : l.type === 'adjustment' && l.adjusts === d.adjusts)
        ? [i]
        : [],
    );
    const sign = d.amount < 0n ? 1n : -1n;
    let weights = targets.map((i) => c.lines[i]!.amount * sign);
    if (!weights.some((w) => w > 0n)) weights = weights.map((w) => (w < 0n ? -w : w));
    const total = d.amount < 0n ? -d.amount : d.amount;
    const shares = largestRemainder(total, weights);
    const given = shares.reduce((s, x) => s + x, 0n);
    if (given !== total) shares[0]! += total - given;
    targets.forEach((i, k) => {
      attached[i]! -= shares[k]! * sign;
    });
  });
  const taxed = c.lines.map((l, i) => {
    const isTaxed = ['flat', 'usage', 'minimum_commitment', 'adjustment', 'one_off'].includes(l.type);
    const rates = c.exempt || !isTaxed ? [] : (c.rates[l.product ?? ''] ?? []);
    const base = l.amount + attached[i]!;
    return { base, rates, taxes: referenceLineTaxes(base, rates) };
  });
  const subtotal = c.lines.reduce((s, l) => s + l.amount, 0n);
  let tax = 0n;
  let exclusive = 0n;
  for (const x of taxed)
    x.rates.forEach((r, k) => {
      tax += x.taxes[k]!;
      if (!r.inclusive) exclusive += x.taxes[k]!;
    });
  for (const l of c.lines)
    for (const d of l.taxes ?? []) {
      tax += d.amount;
      if (!c.pool[d.rate]!.inclusive) exclusive += d.amount;
    }
  const preCredit = subtotal + exclusive;
  const floored = c.kind !== 'advance' && c.kind !== 'threshold' && preCredit < 0n ? 0n : preCredit;
  const credit = floored > 0n ? (c.grant < floored ? c.grant : floored) : 0n;
  return { taxed, subtotal, tax, exclusive, amount: floored - credit, credit };
}

const seeds = [41_001, 41_003];

/** amount = subtotal + exclusive tax − credit, each against the reference; null when it holds. */
function amountIdentity(
  c: Case,
  { priced, totals, ref }: ReturnType<typeof runPipeline> & { ref: ReturnType<typeof reference> },
): string | null {
  const m = (x: string) => toMinor(x, c.scale);
  if (m(totals.subtotal) !== ref.subtotal) return `subtotal ${totals.subtotal}, reference ${ref.subtotal}`;
  if (m(totals.tax) !== ref.tax) return `tax ${totals.tax}, reference ${ref.tax}`;
  const sum = priced.lines.reduce((s, l) => s + m(l.amount), 0n);
  if (sum !== m(priced.amount)) return 'amount ≠ Σ lines';
  const taxLines = priced.lines.filter((l) => l.type === 'tax').reduce((s, l) => s + m(l.amount), 0n);
  const credit = priced.lines.filter((l) => l.type === 'credit').reduce((s, l) => s - m(l.amount), 0n);
  if (taxLines !== ref.exclusive) return `exclusive tax ${taxLines}, reference ${ref.exclusive}`;
  if (m(priced.amount) !== m(totals.subtotal) + taxLines - credit) return 'amount ≠ subtotal + exclusive tax − credit';
  if (m(priced.amount) !== ref.amount) return `amount ${priced.amount}, reference ${fromMinor(ref.amount, c.scale)}`;
  if (c.kind !== 'advance' && c.kind !== 'threshold' && m(priced.amount) < 0n) return 'below zero';
  return null;
}

/** Each line's tax per rate = round(rate × its taxable amount), on the recorded base; null when it holds. */
function lineTaxIdentity(
  c: Case,
  { priced, ref }: ReturnType<typeof runPipeline> & { ref: ReturnType<typeof reference> },
): string | null {
  for (let i = 0; i < c.lines.length; i++) {
    const line = priced.lines[i]!;
    if (c.lines[i]!.type === 'deduction') continue;
    const want = ref.taxed[i]!;
    const got = line.taxes ?? [];
    if (got.length !== want.rates.length) return `line ${i}: ${got.length} taxes, reference ${want.rates.length}`;
    for (let k = 0; k < got.length; k++) {
      if (got[k]!.tax_rate_id !== want.rates[k]!.row.id) return `line ${i}: rate ${got[k]!.tax_rate_id}`;
      if (toMinor(got[k]!.amount, c.scale) !== want.taxes[k]!)
        return `line ${i}: tax ${got[k]!.amount}, reference ${fromMinor(want.taxes[k]!, c.scale)} on ${fromMinor(want.base, c.scale)}`;
      if (toMinor(got[k]!.base ?? line.amount, c.scale) !== want.base) return `line ${i}: base ${got[k]!.base}`;
    }
  }
  return null;
}

t.test(`the invoice amounts of ${RUNS} random invoices of every kind`, async (t) => {
  const lineFailures: string[] = [];
  const failures = forAll(seeds[0]!, RUNS, generate, (c) => {
    const figures = { ...runPipeline(c), ref: reference(c) };
    const lineProblem = lineTaxIdentity(c, figures);
    if (lineProblem && lineFailures.length < 5)
      lineFailures.push(
        `seed ${seeds[0]} ${c.kind} ${c.currency}: ${lineProblem} — ${JSON.stringify(c.lines, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
      );
    return amountIdentity(c, figures);
  });
  t.same(failures, [], 'amount = subtotal + exclusive tax − credit on every invoice kind, as the reference has it');
  t.same(
    lineFailures,
    [],
    "each line's tax = round(rate × its taxable amount after discounts), once per line and rate",
  );
});

/** Quantity text in tenths → pieces that add up to it. */
function pieces(g: Seeded, total: bigint): bigint[] {
  const out: bigint[] = [];
  for (let left = total; left > 0n; ) {
    const p = BigInt(g.int(1, Number(left)));
    out.push(p);
    left -= p;
  }
  return out;
}

t.test(
  `credit notes of a line: never more than its net + tax, exactly them in full, by quantity, amount or pieces (${RUNS} invoices)`,
  async (t) => {
    const modes = ['quantity', 'quantity_pieces', 'amount', 'amount_pieces'] as const;
    const failures = forAll(
      seeds[1]!,
      RUNS,
      (g) => {
        const c = generate(g, ['close', 'advance', 'draft', 'upcoming']);
        // Nothing deducted nor paid by prepaid credit: the invoice's amount then covers any line's net + tax.
        c.lines = c.lines.filter((l) => l.type !== 'deduction');
        c.grant = 0n;
        return { c, mode: g.pick(modes), pick: g.int(0, 1000), split: g.int(0, 2 ** 30) };
      },
      (value) => {
        try {
          return creditInFull(value);
        } catch (err) {
          return `refused: ${(err as Error).message}`;
        }
      },
    );
    t.same(failures, []);
  },
);

/** Credits one line of a random invoice in full, in the mode given; null when every step held. */
function creditInFull({ c, mode, pick, split }: { c: Case; mode: string; pick: number; split: number }): string | null {
  {
    const { priced, totals } = runPipeline(c);
    const ref = reference(c);
    const candidates = c.lines.flatMap((l, i) => (l.type !== 'discount' && ref.taxed[i]!.base > 0n ? [i] : []));
    if (candidates.length === 0) return null;
    const i = candidates[pick % candidates.length]!;
    const net = ref.taxed[i]!.base;
    const charged = ref.taxed[i]!.taxes.reduce((s, x) => s + x, 0n);
    const exclusive = ref.taxed[i]!.rates.reduce((s, r, k) => s + (r.inclusive ? 0n : ref.taxed[i]!.taxes[k]!), 0n);
    const state = creditState(priced, totals.tax);
    const g = { next: () => (split = (split * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 } as Seeded;
    g.int = (min: number, max: number) => min + Math.floor(g.next() * (max - min + 1));
    let credited = 0n;
    let reversed = 0n;
    const take = (credit: CreditRequest) => {
      let note: { amount: string; tax: string };
      try {
        note = takeNote(state, credit);
      } catch (err) {
        if (/smallest unit|nothing left/.test(String((err as Error).message))) throw err;
        throw new Error(`${(err as Error).message} (${JSON.stringify(credit)}, credited ${credited} of ${net})`);
      }
      credited += toMinor(note.amount, c.scale);
      reversed += toMinor(note.tax, c.scale);
    };
    const units = BigInt(Math.round(Number(c.lines[i]!.quantity) * 10));
    const tenths = (x: bigint) => `${x / 10n}.${x % 10n}`;
    if (mode === 'quantity') take({ kind: 'lines', lines: [{ line: i, quantity: c.lines[i]!.quantity }] });
    else if (mode === 'amount') take({ kind: 'lines', lines: [{ line: i, amount: fromMinor(net, c.scale) }] });
    else {
      let carried = 0n;
      for (const p of pieces(g, mode === 'quantity_pieces' ? units : net)) {
        if (mode === 'amount_pieces') take({ kind: 'lines', lines: [{ line: i, amount: fromMinor(p, c.scale) }] });
        else {
          // A piece worth less than the minor unit is refused: it joins the next one.
          try {
            take({ kind: 'lines', lines: [{ line: i, quantity: tenths(carried + p) }] });
            carried = 0n;
          } catch (err) {
            const message = String((err as Error).message);
            // Rounding may credit the whole net before the last units: they have nothing left.
            if (/nothing left/.test(message) && credited === net + exclusive) break;
            if (!/smallest unit/.test(message)) throw err;
            carried += p;
          }
        }
        if (credited > net + exclusive) return `credited ${credited} > net ${net} + tax ${exclusive}`;
        if (reversed > charged) return `reversed ${reversed} > charged ${charged}`;
      }
      if (carried && credited !== net + exclusive) return `quantity ${tenths(carried)} left uncredited`;
    }
    if (credited !== net + exclusive) return `credited ${credited}, net + tax ${net + exclusive}`;
    if (reversed !== charged) return `tax reversed ${reversed}, charged ${charged}`;
    if (toMinor(state.lines[i]!.credited_amount, c.scale) !== net) return 'the line is not credited its net';
    return null;
  }
}
