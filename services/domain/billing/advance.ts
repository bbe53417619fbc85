import { withTransaction, type PgClient } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import type { BillingAnchor, BillingInterval, TaxExempt } from '../../../shared/vocabulary.js';
import { TAX_PROFILE_COLUMNS } from '../tax/invoice-tax.js';
import { amountInvoices } from './invoice-amounts.js';
import { finalStatus, lastDay, nothingToBill, type ClosedInvoice } from './close.js';
import { issueInvoices, type InvoiceToIssue } from './issue.js';
import { lockAndAllocateCredits } from './credits.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { isoDate } from './deductions.js';
import { firstPaymentAttemptAt } from './dunning.js';
import { moveToNextPeriods } from './period-pointers-store.js';
import { periodContaining, scheduleOf } from '../subscriptions/periods.js';
import { pricePeriods } from './price-periods.js';
import { inScope, LIVE_CUSTOMERS, type BillingScope } from './scope.js';

/**
 * Advance invoices (docs/billing.md "Billing periods"): a period longer than a month (quarter, year, month × n) bills
 * its flat items once, in advance, when it begins — or when the trial ends, if later — on an invoice of reason
 * `advance` for the whole period; its usage-priced items are billed per month in arrears by the period close
 * (close.ts). As the close: one transaction per batch (FOR UPDATE SKIP LOCKED), the invoice, its lines, credit,
 * events and the move of advance_period_start to the next period commit together, and UNIQUE (subscription_id,
 * period_start) WHERE reason = 'advance' stops a second invoice for a period.
 */
interface AdvanceRow {
  id: string;
  account_id: string;
  customer_id: string;
  currency: string;
  created_at: Date;
  canceled_at: Date | null;
  trial_end: Date | null;
  interval: BillingInterval;
  interval_count: number;
  billing_anchor: BillingAnchor;
  advance_period_start: Date;
  advance_period_end: Date;
  tax_exempt: TaxExempt;
  country: string | null;
  region: string | null;
  net_terms_days: number;
}

const ADVANCE_BATCH = 500;
const DAY_MS = 86_400_000;
/** Due: the period has begun (and the trial ended); a canceled subscription gets none for periods after it. */
const ADVANCE_DUE = `s.advance_period_start <= $1 AND (s.trial_end IS NULL OR s.trial_end <= $1)
  AND (s.status = 'active' OR s.advance_period_start < s.canceled_at)`;

export async function issueAdvanceInvoices(
  deps: BillingDeps,
  now: Date,
  opts: { timings?: BillingTimings; scope?: BillingScope; onBatch?: (issued: ClosedInvoice[]) => void } = {},
): Promise<ClosedInvoice[]> {
  const scope = opts.scope ?? LIVE_CUSTOMERS;
  const all: ClosedInvoice[] = [];
  for (;;) {
    const batch = await withTransaction(deps.pg, async (client) => {
      const r = await timed(opts.timings, 'postgres_ms', () =>
        client.query<AdvanceRow>(
          `SELECT s.id, s.account_id, a.customer_id, s.currency, s.created_at, s.canceled_at, s.trial_end, s."interval",
                  s.interval_count, s.billing_anchor, s.advance_period_start, s.advance_period_end, ${TAX_PROFILE_COLUMNS('a')}
             FROM subscriptions s JOIN accounts a ON a.id = s.account_id
            WHERE ${ADVANCE_DUE} AND ${inScope('s.account_id', '$2')}
            ORDER BY s.advance_period_start, s.account_id, s.id LIMIT $3 FOR UPDATE OF s SKIP LOCKED`,
          [now, scope.clockId, ADVANCE_BATCH],
        ),
      );
      if (r.rows.length === 0) return null;
      return issueLocked(deps, client, r.rows, now, opts.timings);
    });
    if (batch === null) return all;
    all.push(...batch);
    if (batch.length) opts.onBatch?.(batch);
  }
}

/** The next instant an advance invoice falls due in the scope (a test clock's advance stops there), or null. */
export async function nextAdvanceDue(
  deps: Pick<BillingDeps, 'pg'>,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<Date | null> {
  const r = await deps.pg.query<{ at: Date | null }>(
    `SELECT min(GREATEST(s.advance_period_start, s.trial_end)) AS at FROM subscriptions s
      WHERE s.advance_period_start IS NOT NULL AND (s.status = 'active' OR s.advance_period_start < s.canceled_at)
        AND ${inScope('s.account_id', '$1')}`,
    [scope.clockId],
  );
  return r.rows[0]?.at ?? null;
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
    const invoices = subs.flatMap((s, i): InvoiceToIssue[] => {
      const p = priced[i]!;
      if (nothingToBill(p)) return [];
      const dueAt = new Date(now.getTime() + s.net_terms_days * DAY_MS);
      return [
        {
          id: ids[i]!,
          account_id: s.account_id,
          customer_id: s.customer_id,
          subscription_id: s.id,
          status: finalStatus(p.amount),
          currency: s.currency,
          amount: p.amount,
          ...totals[i]!,
          tax_exempt: s.tax_exempt,
          period_start: isoDate(s.advance_period_start.getTime()),
          period_end: lastDay(s.advance_period_end),
          due_at: dueAt,
          first_attempt: firstPaymentAttemptAt(dueAt),
          threshold_seq: null,
          priced: p,
        },
      ];
    });
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
