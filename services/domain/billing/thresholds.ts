import type { PgClient } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { amountInvoices } from './invoice-amounts.js';
import { inBatches } from './batches.js';
import { issueInvoices, type ClosedInvoice } from './issue.js';
import { subscriptionInvoice } from './invoice-row.js';
import { deductThresholdInvoices } from './deductions.js';
import { lockCredits } from './credits.js';
import { thresholdInvoicesDue } from './threshold-due.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { pricePeriods } from './price-periods.js';
import { LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import { lockThresholdSubscriptions, nextThresholdSeqs, type ThresholdRow } from './threshold-store.js';
import { DEFAULT_THRESHOLD_SPACING_SECONDS, spacedOut } from './threshold-spacing.js';

/**
 * Progressive billing (issue 28, docs/billing.md "Progressive billing"). A subscription with a `billing_threshold`
 * is billed during its period whenever the period's amount due so far — priced exactly as the upcoming invoice:
 * the period's lines up to now, minus what earlier threshold invoices billed, taxed, prepaid credit applied —
 * reaches the threshold: a `threshold` invoice for that amount is issued (numbered, `invoice.created`) and the
 * payment pass charges it at once. The period's final invoice (and every later threshold invoice) holds the
 * period's lines in full and one `deduction` line per threshold invoice already issued, so
 * Σ of the period's invoices = what the period would have billed without a threshold.
 *
 * Exactly once: the pass locks the subscription row (FOR UPDATE SKIP LOCKED, as the period close does — the two
 * never work on one subscription at once), numbers the invoice `threshold_seq` = 1 + the period's threshold
 * invoices so far, and writes invoice, lines, credit, event and number in one transaction; UNIQUE
 * (subscription, period, threshold_seq) is the last line of defence. A kill -9 leaves all of it or none.
 */

/** Subscriptions with a threshold looked at per transaction. */
const THRESHOLD_BATCH = 200;

/**
 * Issues a threshold invoice for every running period whose amount due at `now` reaches its subscription's
 * threshold (one per subscription per pass: the next pass looks again). Concurrent passes split the
 * subscriptions (SKIP LOCKED); `scope` as for the billing run (a test clock's customers at its instant).
 */
export async function issueThresholdInvoices(
  deps: BillingDeps,
  now: Date,
  opts: { timings?: BillingTimings; scope?: BillingScope; onBatch?: (issued: ClosedInvoice[]) => void } = {},
): Promise<ClosedInvoice[]> {
  const scope = opts.scope ?? LIVE_CUSTOMERS;
  let after = '';
  return inBatches(
    deps.pg,
    async (client) => {
      const subs = await timed(opts.timings, 'postgres_ms', () =>
        lockThresholdSubscriptions(client, { now, after, scope, limit: THRESHOLD_BATCH }),
      );
      if (subs.length === 0) return null;
      after = subs[subs.length - 1]!.id;
      const spacing = deps.thresholdSpacingSeconds ?? DEFAULT_THRESHOLD_SPACING_SECONDS;
      return issueLocked(deps, client, await spacedOut(client, subs, now, spacing), now, opts.timings);
    },
    opts.onBatch,
  );
}

async function issueLocked(
  deps: BillingDeps,
  client: PgClient,
  subs: ThresholdRow[],
  now: Date,
  timings?: BillingTimings,
): Promise<ClosedInvoice[]> {
  if (subs.length === 0) return [];
  const periods = subs.map((s) => ({
    subscription_id: s.id,
    account_id: s.account_id,
    currency: s.currency,
    startMs: s.billing_period_start.getTime(),
    endMs: s.billing_period_end.getTime(),
    usageEndMs: now.getTime(),
  }));
  const priced = await pricePeriods(deps, client, periods, { timings });
  return timed(timings, 'postgres_ms', async () => {
    await deductThresholdInvoices(client, periods, priced);
    const totals = await amountInvoices(
      client,
      subs.map((s, i) => ({ priced: priced[i]!, profile: s })),
    );
    // The amount due as the upcoming invoice shows it, prepaid credit included: each candidate with the credit the
    // invoices issued before it left (threshold-due.ts), so an invoice is issued at the amount it was checked at.
    const ids = subs.map(() => newId('inv'));
    // Only the accounts with something owed may spend credit (their grants stay locked until the commit).
    const grants = await lockCredits(
      client,
      subs.filter((_, i) => new Decimal(priced[i]!.amount).gt(0)).map((s) => s.account_id),
      now,
    );
    const check = thresholdInvoicesDue(
      grants,
      subs.map((s, i) => ({
        invoice_id: ids[i]!,
        account_id: s.account_id,
        priced: priced[i]!,
        threshold: s.threshold,
      })),
    );
    const due = subs.flatMap((s, i) =>
      check.due[i] ? [{ s, id: ids[i]!, priced: priced[i]!, totals: totals[i]! }] : [],
    );
    if (due.length === 0) return [];
    const creditUses = check.uses;
    const seqOf = await nextThresholdSeqs(
      client,
      due.map((v) => ({ subscription_id: v.s.id, periodStart: v.s.billing_period_start })),
    );
    // Issued and charged at once (the payment pass charges it in this run).
    const invoices = due.map((v) =>
      subscriptionInvoice({
        id: v.id,
        // Due now whatever the customer's terms (the threshold is the agreed limit).
        subscriber: { ...v.s, subscription_id: v.s.id, net_terms_days: 0 },
        period: { start: v.s.billing_period_start, end: v.s.billing_period_end },
        priced: v.priced,
        totals: v.totals,
        now,
        status: 'open',
        thresholdSeq: seqOf.get(v.s.id)!,
      }),
    );
    return issueInvoices(deps, client, 'threshold', invoices, now, { creditUses });
  });
}
