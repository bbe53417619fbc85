import { withTransaction, type PgClient } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { appendEvents, type NewEvent } from '../events/outbox-store.js';
import { billsUsageMonthly, periodContaining, scheduleOf, usageSchedule } from '../subscriptions/periods.js';
import type { BillingAnchor, BillingInterval } from '../../../shared/vocabulary.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { pricePeriods, type PeriodToPrice } from './price-periods.js';
import type { PricedInvoice, PricedLine } from '../pricing/invoice-lines.js';
import { firstPaymentAttemptAt } from './dunning.js';
import { lockAndAllocateCredits, recordCreditUses } from './credits.js';
import { inScope, LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import { numberDocuments } from '../invoices/numbering.js';
import { moveToNextPeriods } from './period-pointers.js';
import { TAX_PROFILE_COLUMNS } from '../tax/invoice-tax.js';
import { amountInvoices } from './invoice-amounts.js';
import type { TaxExempt } from '../../../shared/vocabulary.js';
import { deductThresholdInvoices, excessAsCredit, writeExcessGrants } from './deductions.js';
import { hostedInvoiceUrl, type HostedLinks } from '../hosted-pages/links.js';

/**
 * Period close (docs/design.md §8 Invoice). A subscription's period [billing_period_start, billing_period_end) — its
 * periods or, inside a period longer than a month, its usage months (services/domain/subscriptions/periods.ts) — is due
 * once its end plus the grace period has passed. Each
 * batch runs in ONE transaction: the due subscriptions are locked (FOR UPDATE SKIP LOCKED: concurrent runs
 * split the work instead of waiting or doubling it), priced (late usage of earlier periods included), prepaid
 * credit applied (services/domain/billing/credits.ts; the grants stay locked until commit), and their invoices, lines,
 * credit ledger, `invoice.created` events and the move of billing_period_start/_end to the next period commit together — a crash or kill at any
 * point leaves either all of it or none. UNIQUE (subscription_id, period_start) is the last line of defence.
 * A subscription several periods behind is closed one period per pass, oldest first.
 */
export interface ClosedInvoice {
  id: string;
  customer_id: string;
  subscription_id: string;
  amount: string;
  currency: string;
  /** draft: written at the period's end with BILLING_DRAFTS, finalized later (services/domain/billing/drafts.ts). */
  status: 'draft' | 'open' | 'paid';
}

interface DueRow {
  id: string;
  account_id: string;
  customer_id: string;
  currency: string;
  canceled_at: Date | null;
  billing_period_start: Date;
  billing_period_end: Date;
  created_at: Date;
  trial_end: Date | null;
  interval: BillingInterval;
  interval_count: number;
  billing_anchor: BillingAnchor;
  /** The customer's tax profile and terms (services/domain/tax/invoice-tax.ts). */
  tax_exempt: TaxExempt;
  country: string | null;
  region: string | null;
  net_terms_days: number;
}

/** Subscriptions closed per transaction. */
export const CLOSE_BATCH = 500;
/**
 * Batches closed at once by one run: while one transaction writes (Postgres), the next prices (ClickHouse,
 * piscina). Due subscriptions are taken in account order, so concurrent batches mostly hold different
 * accounts' credit grants and don't wait on each other's locks.
 */
export const CLOSE_CONCURRENCY = 2;

const DUE = `billing_period_end <= $1 AND (status = 'active' OR billing_period_start < canceled_at)`;
/** With drafts: a subscription's next period closes only once its draft is finalized (periods in order). */
const NO_DRAFT = `NOT EXISTS (SELECT 1 FROM invoices d WHERE d.subscription_id = s.id AND d.status = 'draft')`;

/** Periods ending at or before this instant are due: now − the grace period. */
export function closeCutoff(now: Date, graceSeconds: number): Date {
  return new Date(now.getTime() - graceSeconds * 1000);
}

/**
 * Which periods a close takes: every ended one with BILLING_DRAFTS (those still in their grace period become
 * drafts), else only those whose grace period is over.
 */
function takeCutoff(deps: Pick<BillingDeps, 'drafts' | 'graceSeconds'>, now: Date): Date {
  return deps.drafts ? now : closeCutoff(now, deps.graceSeconds);
}

/** Whether the period ending at `end` is still in its grace period at `now`: its invoice is then a draft. */
export function inGrace(deps: Pick<BillingDeps, 'drafts' | 'graceSeconds'>, end: Date, now: Date): boolean {
  return deps.drafts && end.getTime() + deps.graceSeconds * 1000 > now.getTime();
}

/** Periods due at `now` (for progress: "n of N"); a canceled subscription has none after its last. */
export async function countDuePeriods(
  deps: BillingDeps,
  now: Date,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<number> {
  const idx = (t: string) =>
    `(extract(year FROM ${t} AT TIME ZONE 'UTC') * 12 + extract(month FROM ${t} AT TIME ZONE 'UTC'))`;
  const r = await deps.pg.query<{ n: string | null }>(
    // Calendar months are counted exactly; other periods as one each (a progress figure: "n of N").
    `SELECT sum(CASE WHEN "interval" <> 'month' OR interval_count <> 1 OR billing_anchor <> 'calendar' THEN 1
                     WHEN status = 'canceled' THEN LEAST(${idx('$3::timestamptz')}, ${idx("(canceled_at - interval '1 millisecond')")} + 1) - ${idx('billing_period_start')}
                     ELSE ${idx('$3::timestamptz')} - ${idx('billing_period_start')} END)::text AS n
       FROM subscriptions WHERE ${DUE} AND ${inScope('account_id', '$2')}`,
    [closeCutoff(now, deps.graceSeconds), scope.clockId, new Date(now.getTime() - deps.graceSeconds * 1000)],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * The open period that ends first and when it becomes due (its end + the grace period), or null when no
 * subscription has a period left to close: what a run that closed nothing tells the operator to wait for, and
 * the next instant a test clock's advance stops at (services/domain/billing/clock-advance.ts).
 */
export async function nextPeriodDue(
  deps: Pick<BillingDeps, 'pg' | 'graceSeconds'>,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<{ periodEnd: Date; dueAt: Date } | null> {
  const r = await deps.pg.query<{ end: Date | null }>(
    `SELECT min(billing_period_end) AS end FROM subscriptions
      WHERE (status = 'active' OR billing_period_start < canceled_at) AND ${inScope('account_id', '$1')}`,
    [scope.clockId],
  );
  const periodEnd = r.rows[0]?.end;
  if (!periodEnd) return null;
  return { periodEnd, dueAt: new Date(periodEnd.getTime() + deps.graceSeconds * 1000) };
}

/** Closes every period due at `now`, batch by batch, until none is left that another run does not hold. */
export async function closeDuePeriods(
  deps: BillingDeps,
  now: Date,
  opts: {
    timings?: BillingTimings;
    onBatch?: (closed: ClosedInvoice[]) => void;
    batchSize?: number;
    concurrency?: number;
    scope?: BillingScope;
  } = {},
): Promise<ClosedInvoice[]> {
  const cutoff = takeCutoff(deps, now);
  const all: ClosedInvoice[] = [];
  const closer = async () => {
    for (;;) {
      const closed = await closeBatch(
        deps,
        now,
        cutoff,
        opts.scope ?? LIVE_CUSTOMERS,
        opts.batchSize ?? CLOSE_BATCH,
        opts.timings,
      );
      if (closed === null) return;
      all.push(...closed);
      opts.onBatch?.(closed);
    }
  };
  // allSettled: a failed batch rolls back alone; the run ends only once no other batch is still writing.
  const settled = await Promise.allSettled(Array.from({ length: opts.concurrency ?? CLOSE_CONCURRENCY }, closer));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return all;
}

/** One batch in one transaction; null when nothing due was left to lock. */
async function closeBatch(
  deps: BillingDeps,
  now: Date,
  cutoff: Date,
  scope: BillingScope,
  batchSize: number,
  timings?: BillingTimings,
): Promise<ClosedInvoice[] | null> {
  return withTransaction(deps.pg, async (client) => {
    const due = await timed(timings, 'postgres_ms', () =>
      client.query<DueRow>(
        `SELECT s.id, s.account_id, a.customer_id, s.currency, s.canceled_at, s.billing_period_start, s.billing_period_end,
                s.created_at, s.trial_end, s."interval", s.interval_count, s.billing_anchor, ${TAX_PROFILE_COLUMNS('a')}
           FROM subscriptions s JOIN accounts a ON a.id = s.account_id
          WHERE ${DUE} AND ${inScope('s.account_id', '$3')} AND ($4::boolean IS FALSE OR ${NO_DRAFT})
          ORDER BY s.billing_period_start, s.account_id, s.id LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
        [cutoff, batchSize, scope.clockId, deps.drafts],
      ),
    );
    if (due.rows.length === 0) return null;
    const periods: PeriodToPrice[] = due.rows.map((s) => {
      const end = s.billing_period_end.getTime();
      return {
        subscription_id: s.id,
        account_id: s.account_id,
        currency: s.currency,
        startMs: s.billing_period_start.getTime(),
        endMs: end,
        usageEndMs: s.canceled_at ? Math.min(end, s.canceled_at.getTime()) : end,
      };
    });
    const priced = await pricePeriods(deps, client, periods, { timings });
    return timed(timings, 'postgres_ms', async () => {
      // What the period's threshold invoices billed already (progressive billing: deductions.ts).
      await deductThresholdInvoices(client, periods, priced);
      return writeInvoices(client, due.rows, priced, now, deps);
    });
  });
}

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const DAY_MS = 86_400_000;
/** An invoice's period_end: the last day of a period ending at `end` (a UTC midnight). */
export const lastDay = (end: Date) => isoDate(end.getTime() - DAY_MS);

async function writeInvoices(
  client: PgClient,
  due: DueRow[],
  priced: Awaited<ReturnType<typeof pricePeriods>>,
  now: Date,
  deps: Pick<BillingDeps, 'drafts' | 'graceSeconds' | 'numberPrefix' | 'hostedLinks'>,
): Promise<ClosedInvoice[]> {
  const ids = due.map(() => newId('inv'));
  const draft = due.map((s) => inGrace(deps, s.billing_period_end, now));
  // Tax after discounts and before prepaid credit (docs/billing.md "Tax"): credit pays the taxed total. A draft is
  // taxed as it stands, and again when it is finalized (drafts.ts).
  const totals = await amountInvoices(
    client,
    due.map((s, i) => ({ priced: priced[i]!, profile: s })),
  );
  // Never below zero after the deductions; the excess becomes credit once the invoice is finalized (a draft's is
  // worked out again at its finalization).
  const excess = excessAsCredit(
    due.map((s, i) => ({
      invoice_id: ids[i]!,
      account_id: s.account_id,
      priced: priced[i]!,
      periodStart: isoDate(s.billing_period_start.getTime()),
    })),
  ).filter((g) => !draft[ids.indexOf(g.invoice_id)]);
  // Prepaid credit first (it lowers the amount), then the status: nothing left to charge → paid at once, without
  // a charge. A draft takes no credit (nor number, nor charge) until it is finalized.
  const creditUses = await lockAndAllocateCredits(
    client,
    due.flatMap((s, i) => (draft[i] ? [] : [{ invoice_id: ids[i]!, account_id: s.account_id, priced: priced[i]! }])),
    now,
  );
  // A usage month of a period longer than a month with nothing to bill (no usage-priced item, no late usage): no
  // invoice, the subscription only moves on.
  const empty = due.map((s, i) => billsUsageMonthly(s) && nothingToBill(priced[i]!));
  const invoices = due.flatMap((s, i) => {
    if (empty[i]) return [];
    const p = priced[i]!;
    return {
      id: ids[i]!,
      sub: s,
      priced: p,
      status: draft[i] ? ('draft' as const) : finalStatus(p.amount),
      periodStart: isoDate(s.billing_period_start.getTime()),
      periodEnd: lastDay(s.billing_period_end),
      totals: totals[i]!,
      dueAt: new Date(now.getTime() + s.net_terms_days * DAY_MS),
    };
  });
  const inserted = await client.query<{ id: string }>(
    // number NULL here (not the column's default): only the invoices really written take numbers, below.
    `INSERT INTO invoices (id, account_id, customer_id, subscription_id, status, currency, amount, period_start, period_end,
                           created_at, paid_at, next_payment_attempt_at, subtotal, tax, due_at, tax_exempt, number)
     SELECT u.id, u.account_id, u.customer_id, u.subscription_id, u.status, u.currency, u.amount, u.period_start, u.period_end,
            $9::timestamptz, CASE WHEN u.status = 'paid' THEN $9::timestamptz END, CASE WHEN u.status = 'open' THEN u.first_attempt END,
            u.subtotal, u.tax, u.due_at, u.tax_exempt, NULL::bigint
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::date[], $10::date[],
                   $11::numeric[], $12::numeric[], $13::timestamptz[], $14::text[], $15::timestamptz[])
            AS u(id, account_id, customer_id, subscription_id, status, currency, amount, period_start, period_end,
                 subtotal, tax, due_at, tax_exempt, first_attempt)
     ON CONFLICT (subscription_id, period_start) WHERE reason = 'period' DO NOTHING RETURNING id`,
    [
      invoices.map((v) => v.id),
      invoices.map((v) => v.sub.account_id),
      invoices.map((v) => v.sub.customer_id),
      invoices.map((v) => v.sub.id),
      invoices.map((v) => v.status),
      invoices.map((v) => v.sub.currency),
      invoices.map((v) => v.priced.amount),
      invoices.map((v) => v.periodStart),
      now,
      invoices.map((v) => v.periodEnd),
      invoices.map((v) => v.totals.subtotal),
      invoices.map((v) => v.totals.tax),
      invoices.map((v) => v.dueAt),
      invoices.map((v) => v.sub.tax_exempt),
      // Dunning counts from the due date (net_terms_days 0: at once).
      invoices.map((v) => firstPaymentAttemptAt(v.dueAt)),
    ],
  );
  const written = new Set(inserted.rows.map((r) => r.id));
  const kept = invoices.filter((v) => written.has(v.id));
  await recordCreditUses(
    client,
    creditUses.filter((u) => written.has(u.invoice_id)),
  );
  await writeExcessGrants(client, excess, written);
  await insertInvoiceLines(
    client,
    kept.flatMap((v) => v.priced.lines.map((l, position) => ({ invoice_id: v.id, position, ...l }))),
  );
  const finalized = kept.flatMap((v) => (v.status === 'draft' ? [] : [{ ...v, status: v.status }]));
  await appendEvents(
    client,
    finalized.flatMap((v) =>
      issuedEvents(v.sub.account_id, v.id, v.priced.amount, v.sub.currency, v.status, deps.hostedLinks),
    ),
  );
  const next = due.map((s) => periodContaining(usageSchedule(scheduleOf(s)), s.billing_period_end));
  await moveToNextPeriods(
    client,
    'billing',
    due.map((s) => s.id),
    next,
  );
  // Last: the gapless series' row lock is then held only for the commit.
  await numberDocuments(
    client,
    'invoices',
    finalized.map((v) => v.id),
    deps.numberPrefix,
    now,
  );
  return kept.map((v) => ({
    id: v.id,
    customer_id: v.sub.customer_id,
    subscription_id: v.sub.id,
    amount: v.priced.amount,
    currency: v.sub.currency,
    status: v.status,
  }));
}

/**
 * Whether a priced invoice bills nothing at all: no line but, at most, a coupon's 0 "nothing to discount" line (a
 * coupon covering a month of a flat-only quarterly or yearly plan finds no charge there; that alone is no reason
 * for a numbered, announced invoice of 0).
 */
export function nothingToBill(priced: PricedInvoice): boolean {
  return priced.lines.every((l) => l.type === 'discount' && l.product_id === null && new Decimal(l.amount).isZero());
}

/** A finalized invoice's status: nothing to charge → paid at once, without a charge; else open. */
export function finalStatus(amount: string): 'open' | 'paid' {
  return new Decimal(amount).lte(0) ? 'paid' : 'open';
}

/** The events of an invoice being issued (finalized): invoice.created, and invoice.paid when nothing is to charge. */
export function issuedEvents(
  accountId: string,
  invoiceId: string,
  amount: string,
  currency: string,
  status: 'open' | 'paid',
  links?: HostedLinks,
): NewEvent[] {
  const data = { invoice_id: invoiceId, amount: new JsonDecimal(amount), currency };
  // The link a new invoice is issued with (generation 0): where the customer sees and pays it.
  const created = links ? { ...data, hosted_invoice_url: hostedInvoiceUrl(links.key, links.baseUrl, invoiceId) } : data;
  const events: NewEvent[] = [{ accountId, type: 'invoice.created', data: created }];
  if (status === 'paid') events.push({ accountId, type: 'invoice.paid', data });
  return events;
}

/** Writes invoice lines (positions given) in one statement. */
export async function insertInvoiceLines(
  client: PgClient,
  lines: (PricedLine & { invoice_id: string; position: number })[],
): Promise<void> {
  if (lines.length) {
    await client.query(
      `INSERT INTO invoice_lines (invoice_id, position, product_id, meter_id, description, quantity, unit_price, amount, type, price_model, adjusts_invoice_id, dimensions,
                                 service_start, service_end, tax_rate_id, tax_amount, taxes, coupon_id)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::numeric[], $8::numeric[], $9::text[], $10::jsonb[], $11::text[], $12::jsonb[],
                            $13::timestamptz[], $14::timestamptz[], $15::text[], $16::numeric[], $17::jsonb[], $18::text[])`,
      [
        lines.map((l) => l.invoice_id),
        lines.map((l) => l.position),
        lines.map((l) => l.product_id),
        lines.map((l) => l.meter_id),
        lines.map((l) => l.description),
        lines.map((l) => l.quantity),
        lines.map((l) => l.unit_price),
        lines.map((l) => l.amount),
        lines.map((l) => l.type),
        lines.map((l) => (l.price_model ? JSON.stringify(l.price_model) : null)),
        lines.map((l) => l.adjusts_invoice_id),
        lines.map((l) => (l.dimensions ? JSON.stringify(l.dimensions) : null)),
        lines.map((l) => (l.service ? new Date(l.service.fromMs) : null)),
        lines.map((l) => (l.service ? new Date(l.service.toMs) : null)),
        lines.map((l) => l.tax_rate_id ?? null),
        lines.map((l) => l.tax_amount ?? null),
        lines.map((l) => (l.taxes ? JSON.stringify(l.taxes) : null)),
        lines.map((l) => l.coupon_id ?? null),
      ],
    );
  }
}
