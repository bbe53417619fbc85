import { closeDuePeriods, countDuePeriods, type ClosedInvoice } from './close.js';
import { newTimings, timed, type BillingDeps, type BillingTimings } from './deps.js';
import { attemptDuePayments } from './payments.js';
import type { PaymentOutcome } from './payment-outcomes.js';
import { completePendingRefunds } from './credit-notes.js';
import { reconcileUnknownAttempts } from './reconcile.js';
import { LIVE_CUSTOMERS, inScope, type BillingScope } from './scope.js';
import { finalizeDueDrafts } from './drafts.js';
import { issueThresholdInvoices } from './thresholds.js';
import { applyDuePlanChanges } from './plan-changes.js';
import { applyDueCancellations } from './scheduled-cancels-store.js';
import { issueAdvanceInvoices } from './advance.js';
import { emitTrialWillEnd } from './trials.js';
import { expireCredits } from '../credits/expiry-store.js';
import { rechargeWallets } from './auto-recharge.js';

/**
 * One billing run at an instant (docs/design.md §4 `meterline billing run [--now ISO]`, and every tick of the billing
 * role): emit the trial notices due, issue the advance invoices of periods longer than a month that began, issue the threshold invoices due (progressive billing), finalize every draft whose grace period is over (BILLING_DRAFTS), close every period due, and make every payment attempt due — the new invoices' first attempts,
 * dunning retries, and attempts a crash left pending. Payments are pipelined with the close: each committed
 * batch of invoices wakes a payment pass while the next batches close, and a last pass runs once every
 * period is closed. Safe to repeat and to run in several processes at once. `scope`: the customers on no test
 * clock (the default), or one clock's customers at that clock's instant (services/domain/billing/clock-advance.ts).
 */
export interface BillingRunResult {
  invoices: ClosedInvoice[];
  payments: PaymentOutcome[];
  timings: BillingTimings;
}

export interface RunProgress {
  /** Periods closed so far by this run, of those due when it started. */
  closing?(done: number, total: number): void;
  /** Payment attempts completed so far by this run. */
  paying?(done: number): void;
}

export async function runBilling(
  deps: BillingDeps,
  now: Date,
  progress: RunProgress = {},
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<BillingRunResult> {
  const timings = newTimings();
  // Cancellations scheduled for a period's end: canceled before that last period closes (scheduled-cancels-store.ts).
  await timed(timings, 'postgres_ms', () => applyDueCancellations(deps.pg, now, scope));
  // Plan changes scheduled for a period's end (docs/plans.md): the next periods bill the new version's items.
  await timed(timings, 'postgres_ms', () => applyDuePlanChanges(deps.pg, now, scope));
  // Attempts whose processor answer was lost: settled from the processor's record before any new attempt.
  await timed(timings, 'processor_ms', () => reconcileUnknownAttempts(deps, now, scope));
  // Credit past its expiry leaves the balance (docs/credits.md "Expiry"): once per grant, before anything spends.
  await timed(timings, 'postgres_ms', () =>
    expireCredits(deps.pg, now, { condition: inScope, clockId: scope.clockId }),
  );
  const due = progress.closing ? await timed(timings, 'postgres_ms', () => countDuePeriods(deps, now, scope)) : 0;
  let paidSoFar = 0;
  const payer = new PaymentPasses(() =>
    attemptDuePayments(deps, now, {
      timings,
      scope,
      onBatch: (batch) => progress.paying?.((paidSoFar += batch.length)),
    }),
  );
  let closedSoFar = 0;
  // Trials ending within three days: subscription.trial_will_end, once.
  await timed(timings, 'postgres_ms', () => emitTrialWillEnd(deps, now, scope));
  // Periods longer than a month that began: their flat items, in advance.
  const advance = await issueAdvanceInvoices(deps, now, { timings, scope, onBatch: () => payer.wake() }).catch(
    async (err: unknown) => {
      await payer.settled();
      throw err;
    },
  );
  // Running periods whose amount due reached their billing threshold (progressive billing), charged at once.
  const thresholds = await issueThresholdInvoices(deps, now, { timings, scope, onBatch: () => payer.wake() }).catch(
    async (err: unknown) => {
      await payer.settled();
      throw err;
    },
  );
  // Drafts whose grace period is over first (BILLING_DRAFTS): a subscription's next period closes only after.
  const finalized = await finalizeDueDrafts(deps, now, { timings, scope, onBatch: () => payer.wake() }).catch(
    async (err: unknown) => {
      await payer.settled();
      throw err;
    },
  );
  const closed = await closeDuePeriods(deps, now, {
    timings,
    scope,
    onBatch: (batch) => {
      progress.closing?.((closedSoFar += batch.length), Math.max(due, closedSoFar));
      payer.wake();
    },
  }).catch(async (err: unknown) => {
    await payer.settled();
    throw err;
  });
  const invoices = [...advance, ...thresholds, ...finalized, ...closed];
  payer.wake();
  const payments = await payer.done();
  // After the spends: low-balance alerts and auto-recharge top-ups, charged now (docs/credits.md).
  await timed(timings, 'processor_ms', () => rechargeWallets(deps, now, scope));
  // Refunds of credit notes a crash left pending (services/domain/billing/credit-notes.ts).
  await timed(timings, 'processor_ms', () => completePendingRefunds(deps));
  // Report each new invoice's status after its first attempt.
  const status = new Map<string, ClosedInvoice['status']>();
  for (const p of payments) if (p.outcome === 'succeeded') status.set(p.invoice_id, 'paid');
  return { invoices: invoices.map((i) => ({ ...i, status: status.get(i.id) ?? i.status })), payments, timings };
}

/**
 * Payment passes one after another, never two at once in a process: wake() asks for a pass (several wakes
 * while one runs coalesce into one more); done() waits for the last and returns every outcome, or the first error.
 */
class PaymentPasses {
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private error: { err: unknown } | undefined;
  private readonly outcomes: PaymentOutcome[] = [];

  constructor(private readonly pass: () => Promise<PaymentOutcome[]>) {}

  wake(): void {
    if (this.queued || this.error) return;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      if (this.error) return;
      try {
        this.outcomes.push(...(await this.pass()));
      } catch (err) {
        this.error = { err };
      }
    });
  }

  /** Waits for the passes asked for so far (their errors are kept for done()). */
  settled(): Promise<void> {
    return this.chain;
  }

  async done(): Promise<PaymentOutcome[]> {
    await this.chain;
    if (this.error) throw this.error.err;
    return this.outcomes;
  }
}
