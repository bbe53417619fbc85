import type { PgClient } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { billsUsageMonthly, pausedAt, periodContaining, scheduleOf, usageSchedule } from '../subscriptions/periods.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { pricePeriods, type PeriodToPrice } from './price-periods.js';
import { lockAndAllocateCredits } from './credits.js';
import { LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import { countPeriodsEndedBy, firstOpenPeriodEnd, lockDuePeriods, type DueRow } from './close-store.js';
import { moveToNextPeriods } from './period-pointers-store.js';
import { issueInvoices, type ClosedInvoice } from './issue.js';
import { inBatches } from './batches.js';
import { nothingToBill, subscriptionInvoice } from './invoice-row.js';
import { amountInvoices } from './invoice-amounts.js';
import { deductThresholdInvoices, excessAsCredit, isoDate } from './deductions.js';

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
export type { ClosedInvoice };

/** Subscriptions closed per transaction. */
export const CLOSE_BATCH = 500;
/**
 * Batches closed at once by one run: while one transaction writes (Postgres), the next prices (ClickHouse,
 * piscina). Due subscriptions are taken in account order, so concurrent batches mostly hold different
 * accounts' credit grants and don't wait on each other's locks.
 */
export const CLOSE_CONCURRENCY = 2;

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
  return countPeriodsEndedBy(deps.pg, closeCutoff(now, deps.graceSeconds), scope);
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
  const periodEnd = await firstOpenPeriodEnd(deps.pg, scope);
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
  const closer = () =>
    inBatches(
      deps.pg,
      (client) =>
        closeBatch(
          deps,
          client,
          now,
          cutoff,
          opts.scope ?? LIVE_CUSTOMERS,
          opts.batchSize ?? CLOSE_BATCH,
          opts.timings,
        ),
      opts.onBatch,
      all,
    );
  // allSettled: a failed batch rolls back alone; the run ends only once no other batch is still writing.
  const settled = await Promise.allSettled(Array.from({ length: opts.concurrency ?? CLOSE_CONCURRENCY }, closer));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return all;
}

/** One batch in the caller's transaction; null when nothing due was left to lock. */
async function closeBatch(
  deps: BillingDeps,
  client: PgClient,
  now: Date,
  cutoff: Date,
  scope: BillingScope,
  batchSize: number,
  timings?: BillingTimings,
): Promise<ClosedInvoice[] | null> {
  const due = await timed(timings, 'postgres_ms', () =>
    lockDuePeriods(client, { cutoff, limit: batchSize, scope, drafts: deps.drafts }),
  );
  if (due.length === 0) return null;
  const periods: PeriodToPrice[] = due.map((s) => {
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
    return writeInvoices(client, due, priced, now, deps);
  });
}

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
  // Nor for a period ending while collection is paused (pausedAt): its usage stays recorded, unbilled.
  const empty = due.map(
    (s, i) => (billsUsageMonthly(s) && nothingToBill(priced[i]!)) || pausedAt(s, s.billing_period_end),
  );
  const invoices = due.flatMap((s, i) =>
    empty[i]
      ? []
      : [
          subscriptionInvoice({
            id: ids[i]!,
            subscriber: { ...s, subscription_id: s.id },
            period: { start: s.billing_period_start, end: s.billing_period_end },
            priced: priced[i]!,
            totals: totals[i]!,
            now,
            status: draft[i] ? 'draft' : undefined,
          }),
        ],
  );
  return issueInvoices(deps, client, 'period', invoices, now, {
    creditUses,
    excess,
    beforeNumbering: () =>
      moveToNextPeriods(
        client,
        'billing',
        due.map((s) => s.id),
        due.map((s) => periodContaining(usageSchedule(scheduleOf(s)), s.billing_period_end)),
      ),
  });
}
