import { withTransaction, type PgClient } from '../../../shared/clients/postgres.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import { hasPrefix } from '../../../shared/ids.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../../shared/money/decimal.js';
import { sumOfLines, type PricedInvoice } from '../pricing/invoice-lines.js';
import { inBatches } from './batches.js';
import { completeIssue, type ClosedInvoice } from './issue.js';
import { subscriptionInvoice } from './invoice-row.js';
import { deleteInvoiceLines, finalizeDraftRows } from './issue-store.js';
import { lockAndAllocateCredits } from './credits.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { pricePeriods } from './price-periods.js';
import { LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import {
  appendOneOffLine,
  firstDraftDue,
  lockDueDrafts,
  lockInvoiceAsDraft,
  oneOffLinesOf,
  type DraftRow,
} from './drafts-store.js';
import { amountInvoices } from './invoice-amounts.js';
import { deductThresholdInvoices, excessAsCredit } from './deductions.js';

/**
 * Drafts during the grace period (issue 31; docs/billing.md "Drafts"). With BILLING_DRAFTS the close writes a
 * period's invoice as a `draft` when the period ends (services/domain/billing/close.ts): no number, no prepaid
 * credit, no charge. Finalizing it — by the billing run once BILLING_GRACE_SECONDS have passed since the period's
 * end, or early by an operator — re-prices the period over its usage as it is THEN (late records land in the
 * invoice itself instead of an adjustment on the next one), keeps the operator's `one_off` lines, applies
 * prepaid credit, and in one transaction sets the invoice `open` (or `paid` when nothing is left to charge),
 * issued now, with its `invoice.created` event and its number from the gapless series; the payment pass then
 * charges it as any new invoice.
 */

/** Drafts finalized per transaction. */
const FINALIZE_BATCH = 500;

/** Finalizes every draft whose grace period is over at `now`, batch by batch (concurrent runs split them). */
export async function finalizeDueDrafts(
  deps: BillingDeps,
  now: Date,
  opts: { timings?: BillingTimings; onBatch?: (done: ClosedInvoice[]) => void; scope?: BillingScope } = {},
): Promise<ClosedInvoice[]> {
  const all: ClosedInvoice[] = [];
  if (!deps.drafts) return all;
  const scope = opts.scope ?? LIVE_CUSTOMERS;
  return inBatches(
    deps.pg,
    async (client) => {
      const due = await lockDueDrafts(client, {
        now,
        graceSeconds: deps.graceSeconds,
        limit: FINALIZE_BATCH,
        scope,
      });
      if (due.length === 0) return null;
      return finalizeLocked(deps, client, due, now, opts.timings);
    },
    opts.onBatch,
    all,
  );
}

/**
 * When the first draft of the scope is due to be finalized (its period's end + BILLING_GRACE_SECONDS), or null:
 * an instant a test clock's advance stops at (services/domain/billing/clock-advance.ts), as it stops at a period's
 * close — a clock moved past it finalizes and charges the draft at that time, not at the advance's target.
 */
export async function nextDraftDue(
  deps: Pick<BillingDeps, 'pg' | 'graceSeconds' | 'drafts'>,
  scope: BillingScope = LIVE_CUSTOMERS,
): Promise<Date | null> {
  if (!deps.drafts) return null;
  return firstDraftDue(deps.pg, deps.graceSeconds, scope);
}

const notFound = (id: string) => new NotFoundError(`No invoice ${id}.`);
const notDraft = (id: string, status: string) =>
  new ConflictError(
    `Invoice ${id} is ${status}: it was finalized already, only a draft can be finalized or take lines.`,
    'invoice_finalized',
  );

/** Locks one draft of the deployment (operators act for every customer); 404 unknown, 409 already finalized. */
async function lockDraft(client: PgClient, id: string): Promise<DraftRow> {
  if (!hasPrefix(id, 'inv')) throw notFound(id);
  const row = await lockInvoiceAsDraft(client, id);
  if (!row) throw notFound(id);
  if (row.status !== 'draft') throw notDraft(id, row.status);
  return row;
}

/** POST /v1/billing/invoices/{id}/finalize: an operator finalizes a draft before its grace period is over. */
export async function finalizeDraftNow(deps: BillingDeps, id: string, now: Date): Promise<ClosedInvoice> {
  return withTransaction(deps.pg, async (client) => {
    const draft = await lockDraft(client, id);
    return (await finalizeLocked(deps, client, [draft], now))[0]!;
  });
}

/** A one-off line as an operator asks for it (exact decimals as written): an amount, or a quantity at a unit price. */
export type OneOffRequest = { description: string } & ({ amount: string } | { quantity: string; unit_price: string });

/**
 * The line in the draft's currency: an amount must already be in its minor unit (422 naming `amount`); quantity ×
 * unit_price is rounded once, half away from zero, like every line.
 */
export function oneOffLine(
  currency: string,
  req: OneOffRequest,
): { description: string; quantity: string; unit_price: string; amount: string } {
  if ('amount' in req) {
    const scale = minorUnits(currency);
    if (new Decimal(req.amount).decimalPlaces() > scale)
      throw new ValidationError([
        { field: 'amount', message: `must have at most ${scale} decimal places in ${currency}` },
      ]);
    return { description: req.description, quantity: '1', unit_price: req.amount, amount: req.amount };
  }
  const amount = canonicalDecimal(roundToMinorUnit(new Decimal(req.quantity).times(req.unit_price), currency));
  return { description: req.description, quantity: req.quantity, unit_price: req.unit_price, amount };
}

/**
 * POST /v1/billing/invoices/{id}/lines: appends a `one_off` line to a draft and adds it to its amount (amount =
 * Σ lines stays exact). It survives the re-pricing at finalization.
 */
export async function addOneOffLine(pg: BillingDeps['pg'], id: string, req: OneOffRequest): Promise<void> {
  await withTransaction(pg, async (client) => {
    const draft = await lockDraft(client, id);
    const line = oneOffLine(draft.currency, req);
    // In the subtotal at once; taxed when the draft is re-priced and re-taxed at its finalization.
    await appendOneOffLine(client, id, line);
  });
}

/**
 * The finalization of locked drafts, in the caller's transaction: re-priced lines then the one-off lines,
 * prepaid credit, the issued invoice and its events, and — last, so the series' lock is held only for the
 * commit — the numbers.
 */
async function finalizeLocked(
  deps: BillingDeps,
  client: PgClient,
  drafts: DraftRow[],
  now: Date,
  timings?: BillingTimings,
): Promise<ClosedInvoice[]> {
  const periods = drafts.map((d) => ({ subscription_id: d.subscription_id, startMs: d.period_start.getTime() }));
  const priced = await pricePeriods(
    deps,
    client,
    drafts.map((d) => {
      const end = d.period_end.getTime();
      return {
        subscription_id: d.subscription_id,
        account_id: d.account_id,
        currency: d.currency,
        startMs: d.period_start.getTime(),
        endMs: end,
        usageEndMs: d.canceled_at ? Math.min(end, d.canceled_at.getTime()) : end,
      };
    }),
    { timings },
  );
  return timed(timings, 'postgres_ms', async () => {
    const ids = drafts.map((d) => d.id);
    const oneOffs = await oneOffLinesOf(client, ids);
    const invoices: PricedInvoice[] = drafts.map((d, i) => {
      const lines = [...priced[i]!.lines, ...oneOffs.get(d.id)!];
      return { ...priced[i]!, lines, amount: canonicalDecimal(sumOfLines(lines)) };
    });
    // What the period's threshold invoices billed already (progressive billing: deductions.ts).
    await deductThresholdInvoices(client, periods, invoices);
    // Taxed as the close taxes (after discounts, before prepaid credit), with the rates and the customer's profile
    // as they are at finalization; the draft's own tax lines were deleted with its priced lines.
    const totals = await amountInvoices(
      client,
      drafts.map((d, i) => ({ priced: invoices[i]!, profile: d })),
    );
    const excess = excessAsCredit(
      drafts.map((d, i) => ({
        invoice_id: d.id,
        account_id: d.account_id,
        priced: invoices[i]!,
        periodStart: d.period_start.toISOString().slice(0, 10),
      })),
    );
    const creditUses = await lockAndAllocateCredits(
      client,
      drafts.map((d, i) => ({ invoice_id: d.id, account_id: d.account_id, priced: invoices[i]! })),
      now,
    );
    // Issued now: its due date counts from the finalization, its dunning from the due date (dunning.ts).
    const issued = drafts.map((d, i) =>
      subscriptionInvoice({
        id: d.id,
        subscriber: d,
        period: { start: d.period_start, end: d.period_end },
        priced: invoices[i]!,
        totals: totals[i]!,
        now,
      }),
    );
    // The draft's lines give way to the re-priced ones the issue writes.
    await deleteInvoiceLines(client, ids);
    await finalizeDraftRows(client, issued, now);
    return completeIssue(deps, client, issued, now, { creditUses, excess });
  });
}
