import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { GroupTotals, UsageTotalsRequest } from '../usage/query.js';
import type { WindowStats } from '../usage/stats.js';
import type { PriceModel } from '../pricing/price-models.js';
import { UNPRICED, priceForValue } from '../pricing/dimension-prices.js';
import type { ServiceInterval } from '../pricing/proration.js';
import type { AdjustmentToPrice, GroupToPrice, LineDimensions } from '../pricing/invoice-lines.js';
import { earlierGroupedLines, type BilledGroupRow, type EarlierItemRow } from './late-usage-store.js';

/**
 * Late usage of grouped items (issue 18, docs/design.md §8 Invoice): an earlier invoice's grouped item is
 * re-priced group by group — each group now (from the usage read) against everything billed for that group so
 * far (its usage line plus earlier adjustments of it). A group that appears only in late usage was billed
 * nothing; a group whose records were all cancelled is now zero. Each group's difference is one adjustment
 * line naming the group, so a re-run finds every group billed and adds nothing.
 */

/** The interval an earlier line was priced over (re-priced over the same), or null for the whole period. */
export function earlierService(row: EarlierItemRow): ServiceInterval | null {
  return row.service_start
    ? {
        fromMs: row.service_start.getTime(),
        toMs: row.service_end!.getTime(),
        periodStartMs: row.period_start_at.getTime(),
        periodEndMs: row.period_end_at.getTime(),
      }
    : null;
}

/** The groups of one earlier invoice's grouped item, with the usage request that reads them as they are now. */
export interface BilledGroupedItem {
  first: BilledGroupRow;
  groups: BilledGroupRow[];
  request: UsageTotalsRequest;
}

/**
 * Grouped items of each subscription's invoices of the `lookbackMonths` periods before its `startMs` (void
 * invoices excepted), with what each group was billed so far. Only invoices holding grouped lines cost more
 * than one index probe.
 */
export async function billedGroupsBefore(
  q: PgPool | PgClient,
  periods: readonly { subscription_id: string; account_id: string; startMs: number }[],
  lookbackMonths: number,
): Promise<Map<string, BilledGroupedItem[]>> {
  const out = new Map<string, BilledGroupedItem[]>(periods.map((p) => [p.subscription_id, []]));
  const accountOf = new Map(periods.map((p) => [p.subscription_id, p.account_id]));
  const rows = await earlierGroupedLines(
    q,
    periods.map((p) => p.subscription_id),
    periods.map((p) => new Date(p.startMs)),
    lookbackMonths,
  );
  for (const row of rows) {
    const items = out.get(row.subscription_id)!;
    const last = items[items.length - 1];
    if (
      last &&
      last.first.invoice_id === row.invoice_id &&
      last.first.product_id === row.product_id &&
      last.first.meter_id === row.meter_id &&
      last.first.service_start?.getTime() === row.service_start?.getTime()
    ) {
      last.groups.push(row);
      continue;
    }
    const request: UsageTotalsRequest = {
      accountId: accountOf.get(row.subscription_id)!,
      meterId: row.meter_id,
      type: row.meter_type,
      startMs: row.usage_start.getTime(),
      endMs: row.usage_end.getTime(),
      uniqueBy: row.unique_by ?? undefined,
      groupBy: row.price_model.group_by,
    };
    items.push({ first: row, groups: [row], request });
  }
  return out;
}

/** A group's usage as invoice lines carry it: dimension values by key, null for absent (ClickHouse's ''). */
export function groupsToPrice(groupBy: readonly string[], groups: readonly GroupTotals[] | undefined): GroupToPrice[] {
  return (groups ?? []).map((g) => ({
    dimensions: Object.fromEntries(groupBy.map((k, i) => [k, g.values[i] || null])),
    usage: g.total,
  }));
}

/** Every group of a grouped item of an earlier invoice, billed or now used, as adjustments to price. */
export function groupAdjustments(
  item: BilledGroupedItem,
  now: readonly GroupTotals[] | undefined,
): AdjustmentToPrice[] {
  const { first } = item;
  const groupBy = first.price_model.group_by;
  const keyOf = (d: LineDimensions) => JSON.stringify(groupBy.map((k) => d[k] ?? null));
  const current = new Map(groupsToPrice(groupBy, now).map((g) => [keyOf(g.dimensions), g]));
  const billed = new Map(item.groups.map((g) => [keyOf(g.dimensions), g]));
  const keys = [...new Set([...billed.keys(), ...current.keys()])].sort();
  const zero: WindowStats = {
    start: item.request.startMs,
    end: item.request.endMs,
    count: 0,
    sum: '0',
    ...(first.unique_by ? { unique: 0 } : {}),
  };
  const { minimum_amount: _minimum, group_by: _groupBy, dimension_prices: dp, ...model } = first.price_model;
  return keys.map((key): AdjustmentToPrice => {
    const g = current.get(key);
    const b = billed.get(key);
    const dimensions = Object.fromEntries(groupBy.map((k) => [k, (g ?? b!).dimensions[k] ?? null]));
    // Per-dimension prices: each group at its value's model of that period (a value new in late usage too).
    const groupModel = dp ? (priceForValue(dp, dimensions[dp.dimension] ?? null) ?? UNPRICED) : (model as PriceModel);
    return {
      invoice_id: first.invoice_id,
      period_start: first.period_start,
      period_end: first.period_end,
      product_id: first.product_id,
      product_name: first.product_name,
      model: groupModel,
      minimum_amount: null,
      meter: { id: first.meter_id, aggregation: first.aggregation, unit: first.unit, usage: g?.usage ?? zero },
      billed_quantity: b?.billed_quantity ?? '0',
      billed_amount: b?.billed_amount ?? '0',
      dimensions,
      service: earlierService(first),
    };
  });
}
