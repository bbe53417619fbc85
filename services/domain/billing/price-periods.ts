import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { queryUsageTotals, type UsageTotals, type UsageTotalsRequest } from '../usage/query.js';
import { billedGroupsBefore, earlierService, groupAdjustments, groupsToPrice } from './group-adjustments.js';
import { periodItemRows, type ItemRow } from './period-items-store.js';
import { earlierUsageLines, type BilledRow } from './late-usage-store.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import type { PriceModel } from '../pricing/price-models.js';
import { productPriceIn } from '../pricing/price-books.js';
import {
  priceInvoice,
  type AdjustmentToPrice,
  type InvoiceToPrice,
  type MeterUsage,
  type PricedInvoice,
} from '../pricing/invoice-lines.js';
import { serviceInterval } from '../pricing/proration.js';
import { billedGroupBy } from '../pricing/dimension-prices.js';
import { applyDiscounts } from './discounts.js';

/** A subscription's period to price: usage counts from periodStart up to usageEndMs (exclusive). */
export interface PeriodToPrice {
  subscription_id: string;
  account_id: string;
  currency: string;
  startMs: number;
  /** The period's end (the start of the next one). */
  endMs: number;
  /** The period's end; a canceled subscription's cancellation instant if earlier; a threshold check's now. */
  usageEndMs: number;
  /**
   * An advance invoice (services/domain/billing/advance.ts): the flat items of a period longer than a month, billed at
   * its start. Otherwise such a subscription's periods priced are its usage months, which bill its usage-priced items only.
   */
  advance?: boolean;
}

/** Subscriptions priced per piscina task: large enough to share the hand-off cost, small enough to spread. */
const INVOICES_PER_TASK = 250;

/**
 * How far back a close looks for invoiced periods whose usage changed (late records — accepted up to 35 days
 * back — and corrections): the invoices of the periods that began in the 3 months before the one being priced.
 * Months, not periods: the acceptance window is time (three weekly periods would miss a record 30 days late).
 */
export const LATE_USAGE_LOOKBACK_MONTHS = 3;

/**
 * The items of many subscriptions that were on during each one's period — current ones and those removed or
 * changed during it (services/domain/subscriptions/store.ts keeps the history) — in printed order, with
 * their product's name and price model and their meter.
 */
async function itemsOf(q: PgPool | PgClient, periods: PeriodToPrice[]): Promise<Map<string, ItemRow[]>> {
  const out = new Map<string, ItemRow[]>(periods.map((p) => [p.subscription_id, []]));
  const rows = await periodItemRows(
    q,
    periods.map((p) => p.subscription_id),
    periods.map((p) => new Date(p.startMs)),
    periods.map((p) => new Date(p.endMs)),
    periods.map((p) => p.advance === true),
  );
  for (const row of rows) out.get(row.subscription_id)!.push(row);
  for (const [id, rows] of out) out.set(id, oneLinePerNonAdditiveItem(rows));
  return out;
}

/** Aggregations whose value over a period is the sum of their values over its parts. */
const ADDITIVE = new Set(['count', 'sum']);

/**
 * THE rule of an item changed during a period on a meter that does not add up over time (max, min, last, avg,
 * unique_count, percentiles — docs/billing.md "Proration"): its versions that follow each other without a gap
 * (a change ends one at the instant the next begins) are billed as ONE usage line over the time they cover
 * together, priced with the last of them (the version in force at the period's end, or when the item was
 * removed) — its price model, minimum (pro-rated over that time when it is not the whole period) and group_by.
 * Split in parts, each part's peak, last value or unique users would be billed again: a max of 12.5 across a
 * change of the item's minimum billed 12.5 twice. Sums and counts keep one line per version (each priced at its
 * own rates over its own interval: their parts add up). Rows come in printed order; the merged line takes the
 * place of the chain's first version in print.
 */
export function oneLinePerNonAdditiveItem<
  T extends {
    product_id: string;
    meter_id: string | null;
    aggregation: string | null;
    effective_from: Date | null;
    effective_to: Date | null;
  },
>(rows: T[]): T[] {
  const from = (r: T) => r.effective_from?.getTime() ?? -Infinity;
  const byItem = new Map<string, number[]>();
  rows.forEach((row, i) => {
    if (!row.meter_id || ADDITIVE.has(row.aggregation ?? '')) return;
    const key = `${row.product_id} ${row.meter_id}`;
    byItem.set(key, [...(byItem.get(key) ?? []), i]);
  });
  const out: (T | null)[] = [...rows];
  for (const indexes of byItem.values()) {
    const chain = [...indexes].sort((a, b) => from(rows[a]!) - from(rows[b]!));
    let first = chain[0]!;
    for (const i of chain.slice(1)) {
      const prev = out[first]!;
      if (prev.effective_to === null || prev.effective_to.getTime() !== from(rows[i]!)) {
        first = i;
        continue;
      }
      // The later version, over the time of both, in the place of the earlier one in print.
      const at = Math.min(first, i);
      out[Math.max(first, i)] = null;
      out[at] = { ...rows[i]!, effective_from: prev.effective_from };
      first = at;
    }
  }
  return out.filter((r): r is T => r !== null);
}

/**
 * Usage lines of each subscription's invoices of the LATE_USAGE_LOOKBACK_MONTHS periods before `startMs`
 * (void invoices and drafts excepted: a draft is re-priced whole when it is finalized; threshold invoices too, and
 * adjustments on them: their period's final invoice bills the period whole and deducts them, services/domain/billing/thresholds.ts), with the usage range of their period and what was billed for the item so far.
 * Lines written before price models were snapshotted re-price at their own unit price.
 */
async function billedBefore(q: PgPool | PgClient, periods: PeriodToPrice[]): Promise<Map<string, BilledRow[]>> {
  const out = new Map<string, BilledRow[]>(periods.map((p) => [p.subscription_id, []]));
  const rows = await earlierUsageLines(
    q,
    periods.map((p) => p.subscription_id),
    periods.map((p) => new Date(p.startMs)),
    LATE_USAGE_LOOKBACK_MONTHS,
  );
  for (const row of rows) out.get(row.subscription_id)!.push(row);
  return out;
}

/** A metered item's usage as the line maths take it: the total, and each group's for a grouped item. */
function meterUsage(it: ItemRow, usage: UsageTotals): MeterUsage {
  const { groups, ...total } = usage;
  const out: MeterUsage = { id: it.meter_id!, aggregation: it.aggregation!, unit: it.unit!, usage: total };
  const groupBy = billedGroupBy(it);
  if (groupBy.length) out.groups = groupsToPrice(groupBy, groups);
  return out;
}

/**
 * Prices many subscription periods: items and earlier invoices from Postgres (one query each), usage of every
 * metered item — this period's and the earlier periods' as they are now — from ClickHouse through the one usage
 * query (one query per distinct range and meter type), line maths in the piscina pool (many invoices per
 * task) — or inline without a pool: the upcoming invoice, a single one, is not worth a thread hop.
 */
export async function pricePeriods(
  deps: Pick<BillingDeps, 'clickhouse' | 'database'> & { linesPool?: BillingDeps['linesPool'] },
  q: PgPool | PgClient,
  periods: PeriodToPrice[],
  opts: { timings?: BillingTimings } = {},
): Promise<PricedInvoice[]> {
  if (periods.length === 0) return [];
  // One after another: `q` is the close's transaction client, and a pg client runs one query at a time (pg
  // queues concurrent ones with a DeprecationWarning; pg@9 refuses them).
  const [items, billed, billedGroups] = await timed(
    opts.timings,
    'postgres_ms',
    async () =>
      [
        await itemsOf(q, periods),
        await billedBefore(q, periods),
        await billedGroupsBefore(q, periods, LATE_USAGE_LOOKBACK_MONTHS),
      ] as const,
  );
  const requests: UsageTotalsRequest[] = [];
  const usageOf = (r: UsageTotalsRequest) => requests.push(r) - 1;
  // Per item row: the part of the period it was on (null: all of it) and, if metered, its usage request over that part.
  const itemService = periods.map((p) =>
    items.get(p.subscription_id)!.map((it) => serviceInterval(it.effective_from, it.effective_to, p.startMs, p.endMs)),
  );
  const itemUsage = periods.map((p, pi) =>
    items.get(p.subscription_id)!.map((it, ii) => {
      if (!it.meter_id) return -1;
      const service = itemService[pi]![ii];
      // Usage during a trial is not billed (the first period may begin before the trial's end).
      const startMs = Math.max(service?.fromMs ?? p.startMs, it.trial_end?.getTime() ?? -Infinity);
      const endMs = Math.max(startMs, Math.min(p.usageEndMs, service?.toMs ?? p.endMs));
      return usageOf({
        accountId: p.account_id,
        meterId: it.meter_id,
        type: it.meter_type!,
        startMs,
        endMs,
        uniqueBy: it.unique_by ?? undefined,
        groupBy: billedGroupBy(it).length ? billedGroupBy(it) : undefined,
      });
    }),
  );
  const billedUsage = periods.map((p) =>
    billed.get(p.subscription_id)!.map((b) =>
      usageOf({
        accountId: p.account_id,
        meterId: b.meter_id,
        type: b.meter_type,
        startMs: b.usage_start.getTime(),
        endMs: b.usage_end.getTime(),
        uniqueBy: b.unique_by ?? undefined,
      }),
    ),
  );
  const billedGroupUsage = periods.map((p) => billedGroups.get(p.subscription_id)!.map((g) => usageOf(g.request)));
  const usage = requests.length
    ? await timed(opts.timings, 'clickhouse_ms', () => queryUsageTotals(deps.clickhouse, deps.database, requests))
    : [];
  const toPrice: InvoiceToPrice[] = periods.map((p, pi) => ({
    subscription_id: p.subscription_id,
    currency: p.currency,
    items: items.get(p.subscription_id)!.map((it, ii) => ({
      product_id: it.product_id,
      product_name: it.product_name,
      model: itemPriceIn(it, p.currency),
      minimum_amount: it.minimum_amount,
      quantity: it.quantity,
      service: itemService[pi]![ii],
      meter: it.meter_id ? meterUsage(it, usage[itemUsage[pi]![ii]!]!) : null,
      ...(it.group_by.length ? { group_by: it.group_by } : {}),
      ...(it.dimension_prices ? { dimension_prices: it.dimension_prices } : {}),
    })),
    // An advance invoice bills flat items only: late usage goes to the usage months' invoices.
    adjustments: (p.advance ? [] : billed.get(p.subscription_id)!)
      .map((b, bi): AdjustmentToPrice => {
        const { minimum_amount, ...model } = b.price_model;
        return {
          invoice_id: b.invoice_id,
          period_start: b.period_start,
          period_end: b.period_end,
          product_id: b.product_id,
          product_name: b.product_name,
          model: model as PriceModel,
          minimum_amount,
          service: earlierService(b),
          meter: { id: b.meter_id, aggregation: b.aggregation, unit: b.unit, usage: usage[billedUsage[pi]![bi]!]! },
          billed_quantity: b.billed_quantity,
          billed_amount: b.billed_amount,
        };
      })
      .concat(
        (p.advance ? [] : billedGroups.get(p.subscription_id)!).flatMap((g, gi) =>
          groupAdjustments(g, usage[billedGroupUsage[pi]![gi]!]!.groups),
        ),
      ),
  }));
  const pool = deps.linesPool;
  const priced = pool
    ? await timed(opts.timings, 'piscina_ms', async () => {
        const tasks: Promise<PricedInvoice[]>[] = [];
        for (let i = 0; i < toPrice.length; i += INVOICES_PER_TASK) {
          tasks.push(pool.run({ invoices: toPrice.slice(i, i + INVOICES_PER_TASK) }));
        }
        return (await Promise.all(tasks)).flat();
      })
    : toPrice.map(priceInvoice);
  // Coupons: every pricing of a period is discounted by the one rule, before deductions, tax and credit.
  await timed(opts.timings, 'postgres_ms', () => applyDiscounts(q, periods, priced));
  return priced;
}

/**
 * An item's product price in the subscription's currency (price books). Subscribing checked the product has one
 * (subscriptions/items.ts) and a price book is never removed, so none is a broken invariant: the close stops.
 */
function itemPriceIn(it: ItemRow, currency: string): PriceModel {
  const model = productPriceIn({ ...it, currency: it.product_currency }, currency);
  if (!model)
    throw new Error(`product ${it.product_id} has no price in ${currency} (subscription ${it.subscription_id})`);
  return model;
}
