import type { PgClient } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import { amountInvoices } from './invoice-amounts.js';
import { inBatches } from './batches.js';
import { issueInvoices, type ClosedInvoice } from './issue.js';
import { nothingToBill, subscriptionInvoice } from './invoice-row.js';
import { lockAndAllocateCredits } from './credits.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { moveToNextPeriods } from './period-pointers-store.js';
import { periodContaining, scheduleOf } from '../subscriptions/periods.js';
import { pricePeriods } from './price-periods.js';
import { LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import { firstAdvanceDue, lockAdvanceDue, type AdvanceRow } from './advance-store.js';

/** Subscriptions invoiced per transaction. */
const ADVANCE_BATCH = 500;

/**
 * Advance invoices (docs/billing.md "Billing periods"): a period longer than a month (quarter, year, month × n) bills
 * its flat items once, in advance, when it begins — or when the trial ends, if later — on an invoice of reason
 * `advance` for the whole period; its usage-priced items are billed per month in arrears by the period close
 * (close.ts). As the close: one transaction per batch (FOR UPDATE SKIP LOCKED), the invoice, its lines, credit,
 * events and the move of advance_period_start to the next period commit together, and UNIQUE (subscription_id,
 * period_start) WHERE reason = 'advance' stops a second invoice for a period.
 */
export async function issueAdvanceInvoices(
  deps: BillingDeps,
  now: Date,
  opts: { timings?: BillingTimings; scope?: BillingScope; onBatch?: (issued: ClosedInvoice[]) => void } = {},
): Promise<ClosedInvoice[]> {
  const scope = opts.scope ?? LIVE_CUSTOMERS;
  return inBatches(
    deps.pg,
    async (client) => {
      const due = await timed(opts.timings, 'postgres_ms', () => lockAdvanceDue(client, now, scope, ADVANCE_BATCH));
      if (due.length === 0) return null;
      return issueLocked(deps, client, due, now, opts.timings);
    },
    opts.onBatch,
  );
}

/** The next instant an advance invoice falls due in the scope (a test clock's advance stops there), or null. */
export async function nextAdvanceDue(
  deps: Pick<BillingDeps, 'pg'>,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<Date | null> {
  return firstAdvanceDue(deps.pg, scope);
}

async function issueLocked(
  deps: BillingDeps,
  client: PgClient,
  subs: AdvanceRow[],
  now: Date,
  timings?: BillingTimings,
): Promise<ClosedInvoice[]> {
  const priced = await pricePeriods(
    deps,
    client,
    subs.map((s) => ({
      subscription_id: s.id,
      account_id: s.account_id,
      currency: s.currency,
      startMs: s.advance_period_start.getTime(),
      endMs: s.advance_period_end.getTime(),
      usageEndMs: s.advance_period_end.getTime(),
      advance: true,
    })),
    { timings },
  );
  return timed(timings, 'postgres_ms', async () => {
    const totals = await amountInvoices(
      client,
      subs.map((s, i) => ({ priced: priced[i]!, profile: s })),
    );
    const ids = subs.map(() => newId('inv'));
    const creditUses = await lockAndAllocateCredits(
      client,
      subs.map((s, i) => ({ invoice_id: ids[i]!, account_id: s.account_id, priced: priced[i]! })),
      now,
    );
    // A period with no flat item (a usage-only plan) bills nothing in advance: no invoice of 0, the period moves on.
    const invoices = subs.flatMap((s, i) =>
      nothingToBill(priced[i]!)
        ? []
        : [
            subscriptionInvoice({
              id: ids[i]!,
              subscriber: { ...s, subscription_id: s.id },
              period: { start: s.advance_period_start, end: s.advance_period_end },
              priced: priced[i]!,
              totals: totals[i]!,
              now,
            }),
          ],
    );
    return issueInvoices(deps, client, 'advance', invoices, now, {
      creditUses,
      beforeNumbering: () =>
        moveToNextPeriods(
          client,
          'advance',
          subs.map((s) => s.id),
          subs.map((s) => periodContaining(scheduleOf(s), s.advance_period_end)),
        ),
    });
  });
}
