import type { PgPool } from '../../../shared/clients/postgres.js';
import { ConflictError } from '../../../shared/errors.js';
import { periodContaining, scheduleOf, usageSchedule } from '../subscriptions/periods.js';
import { getSubscription } from '../subscriptions/store.js';
import type { BillingDeps } from './deps.js';
import type { PricedInvoice } from '../pricing/invoice-lines.js';
import { pricePeriods } from './price-periods.js';
import { previewCredits, type SpendableGrant } from './credits.js';
import { customerTaxProfile } from '../tax/store.js';
import { amountInvoices } from './invoice-amounts.js';
import type { InvoiceTotals } from './invoice-amounts.js';
import { deductThresholdInvoices, excessAsCredit } from './deductions.js';

export interface UpcomingInvoice extends PricedInvoice, InvoiceTotals {
  customer_id: string;
  /** The current period (a usage month inside a period longer than a month); usage counts from its start up to `at`. */
  periodStartMs: number;
  periodEndMs: number;
  at: Date;
}

/**
 * The invoice a subscription's current period would produce if it closed at `now`: the billing run's
 * pricing over the period's usage recorded so far, nothing stored. Another account's subscription → NotFoundError; a canceled
 * one has no upcoming invoice → ConflictError subscription_canceled.
 */
export async function upcomingInvoice(
  deps: Pick<BillingDeps, 'clickhouse' | 'database'> & { pg: PgPool },
  accountId: string,
  subscriptionId: string,
  now: Date,
  /** Credit already spent by the customer's other upcoming invoices (spendableCredits); default: all of it. */
  credits?: SpendableGrant[],
): Promise<UpcomingInvoice> {
  const sub = await getSubscription(deps.pg, accountId, subscriptionId);
  if (sub.row.status === 'canceled')
    throw new ConflictError(
      `Subscription ${subscriptionId} is canceled: it has no upcoming invoice.`,
      'subscription_canceled',
    );
  // The next invoice of this period's usage: the period itself, or the running month inside a longer one.
  const period = periodContaining(usageSchedule(scheduleOf(sub.row)), now);
  const [[priced], customer] = await Promise.all([
    pricePeriods(deps, deps.pg, [
      {
        subscription_id: sub.row.id,
        account_id: accountId,
        currency: sub.row.currency,
        startMs: period.start.getTime(),
        endMs: period.end.getTime(),
        // Every record of the period so far, as its close will bill them: a clocked customer's usage is sent at
        // real time, which may be past the clock's `now` (a clock made a minute before real time, docs/test-clocks.md).
        usageEndMs: period.end.getTime(),
      },
    ]),
    customerTaxProfile(deps.pg, accountId),
  ]);
  // As the close does: the threshold invoices' deductions, tax, never below zero, then prepaid credit.
  await deductThresholdInvoices(deps.pg, [{ subscription_id: sub.row.id, startMs: period.start.getTime() }], [priced!]);
  const [totals] = await amountInvoices(deps.pg, [{ priced: priced!, profile: customer! }]);
  excessAsCredit([{ invoice_id: 'upcoming', account_id: accountId, priced: priced!, periodStart: '' }], {
    preview: true,
  });
  await previewCredits(deps.pg, accountId, priced!, now, credits);
  return {
    ...priced!,
    ...totals!,
    customer_id: customer!.customer_id,
    periodStartMs: period.start.getTime(),
    periodEndMs: period.end.getTime(),
    at: now,
  };
}
