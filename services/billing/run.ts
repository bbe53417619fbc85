import { closeDuePeriods, countDuePeriods, type ClosedInvoice } from './close.js';
import { newTimings, timed, type BillingDeps, type BillingTimings } from './deps.js';
import { attemptDuePayments, type PaymentOutcome } from './payments.js';
import { completePendingRefunds } from './credit-notes.js';

/**
 * One billing run at an instant (docs/design.md §4 `meterline billing run [--now ISO]`, and every tick of the billing
 * role): close every period due, then make every payment attempt due — the new invoices' first attempts,
 * dunning retries, and attempts a crash left pending. Safe to repeat and to run in several processes at once.
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

export async function runBilling(deps: BillingDeps, now: Date, progress: RunProgress = {}): Promise<BillingRunResult> {
  const timings = newTimings();
  const due = progress.closing ? await timed(timings, 'postgres_ms', () => countDuePeriods(deps, now)) : 0;
  let closedSoFar = 0;
  const invoices = await closeDuePeriods(deps, now, {
    timings,
    onBatch: (batch) => progress.closing?.((closedSoFar += batch.length), Math.max(due, closedSoFar)),
  });
  let paidSoFar = 0;
  const payments = await attemptDuePayments(deps, now, { timings, onBatch: (batch) => progress.paying?.((paidSoFar += batch.length)) });
  // Refunds of credit notes a crash left pending (services/billing/credit-notes.ts).
  await timed(timings, 'processor_ms', () => completePendingRefunds(deps));
  // Report each new invoice's status after its first attempt.
  const status = new Map<string, ClosedInvoice['status']>();
  for (const p of payments) if (p.outcome === 'succeeded') status.set(p.invoice_id, 'paid');
  return { invoices: invoices.map((i) => ({ ...i, status: status.get(i.id) ?? i.status })), payments, timings };
}
