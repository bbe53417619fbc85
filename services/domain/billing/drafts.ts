import { withTransaction, type PgClient } from '../../../shared/clients/postgres.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import { hasPrefix } from '../../../shared/ids.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import { Decimal, canonicalDecimal, roundToMinorUnit } from '../../../shared/money/decimal.js';
import { sumOfLines, type PricedInvoice, type PricedLine } from '../pricing/invoice-lines.js';
import { inBatches } from './batches.js';
import { completeIssue, type ClosedInvoice } from './issue.js';
import { subscriptionInvoice } from './invoice-row.js';
import { deleteInvoiceLines, finalizeDraftRows } from './issue-store.js';
import { lockAndAllocateCredits } from './credits.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { pricePeriods } from './price-periods.js';
import { inScope, LIVE_CUSTOMERS, type BillingScope } from './scope.js';
import { TAX_PROFILE_COLUMNS } from '../tax/invoice-tax.js';
import { amountInvoices } from './invoice-amounts.js';
import type { TaxProfile } from '../tax/types.js';
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

/** A draft as finalization needs it, locked; with its customer's tax profile and terms as they are now. */
interface DraftRow extends TaxProfile {
  net_terms_days: number;
  id: string;
  account_id: string;
  customer_id: string;
  subscription_id: string;
  currency: string;
  period_start: Date;
  /** The period's end: the day after its last day, 00:00 UTC. */
  period_end: Date;
  canceled_at: Date | null;
}

const DRAFT_COLUMNS = `i.id, i.account_id, i.customer_id, i.subscription_id, i.currency,
  (i.period_start::timestamp AT TIME ZONE 'UTC') AS period_start, ((i.period_end + 1)::timestamp AT TIME ZONE 'UTC') AS period_end, s.canceled_at, ${TAX_PROFILE_COLUMNS('a')}`;
/** A draft, its subscription and its customer's account (tax profile, terms); locks take the invoice row only. */
const DRAFT_FROM = 'invoices i JOIN subscriptions s ON s.id = i.subscription_id JOIN accounts a ON a.id = i.account_id';

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
      // period_end is the last day: the period ends the day after, at 00:00 UTC.
      const due = await client.query<DraftRow>(
        `SELECT ${DRAFT_COLUMNS} FROM ${DRAFT_FROM}
          WHERE i.status = 'draft' AND ((i.period_end + 1)::timestamp AT TIME ZONE 'UTC') + make_interval(secs => $2) <= $1
            AND ${inScope('i.account_id', '$4')}
          ORDER BY i.period_start, i.account_id, i.id LIMIT $3 FOR UPDATE OF i SKIP LOCKED`,
        [now, deps.graceSeconds, FINALIZE_BATCH, scope.clockId],
      );
      if (due.rows.length === 0) return null;
      return finalizeLocked(deps, client, due.rows, now, opts.timings);
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
  const r = await deps.pg.query<{ at: Date | null }>(
    `SELECT min(((i.period_end + 1)::timestamp AT TIME ZONE 'UTC') + make_interval(secs => $1)) AS at
       FROM invoices i WHERE i.status = 'draft' AND ${inScope('i.account_id', '$2')}`,
    [deps.graceSeconds, scope.clockId],
  );
  return r.rows[0]?.at ?? null;
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
  const r = await client.query<DraftRow & { status: string }>(
    `SELECT ${DRAFT_COLUMNS}, i.status FROM ${DRAFT_FROM}
      WHERE i.id = $1 FOR UPDATE OF i`,
    [id],
  );
  const row = r.rows[0];
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
    await client.query(
      `INSERT INTO invoice_lines (invoice_id, position, product_id, meter_id, description, quantity, unit_price, amount, type)
       SELECT $1, COALESCE(max(position) + 1, 0), NULL, NULL, $2, $3::numeric, $4::numeric, $5::numeric, 'one_off'
         FROM invoice_lines WHERE invoice_id = $1`,
      [id, line.description, line.quantity, line.unit_price, line.amount],
    );
    // In the subtotal at once; taxed when the draft is re-priced and re-taxed at its finalization.
    await client.query(
      `UPDATE invoices SET amount = amount + $2::numeric, subtotal = subtotal + $2::numeric WHERE id = $1`,
      [id, line.amount],
    );
  });
}

/** The operators' one-off lines of these drafts, in printed order. */
async function oneOffLinesOf(client: PgClient, ids: string[]): Promise<Map<string, PricedLine[]>> {
  const out = new Map<string, PricedLine[]>(ids.map((id) => [id, []]));
  const r = await client.query<{ invoice_id: string } & PricedLine>(
    `SELECT invoice_id, type, product_id, meter_id, description, quantity::text AS quantity, unit_price::text AS unit_price,
            amount::text AS amount, NULL AS price_model, NULL AS adjusts_invoice_id
       FROM invoice_lines WHERE invoice_id = ANY($1) AND type = 'one_off' ORDER BY invoice_id, position`,
    [ids],
  );
  for (const { invoice_id, ...line } of r.rows) out.get(invoice_id)!.push(line);
  return out;
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
