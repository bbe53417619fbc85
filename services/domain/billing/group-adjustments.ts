import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { MeterType } from '../../../shared/meters/record.js';
import type { GroupTotals, UsageTotalsRequest } from '../usage/query.js';
import type { WindowStats } from '../usage/stats.js';
import type { PriceModel } from '../pricing/price-models.js';
import { UNPRICED, priceForValue } from '../pricing/dimension-prices.js';
import type { ServiceInterval } from '../pricing/proration.js';
import type { AdjustmentToPrice, GroupToPrice, LineDimensions, PriceSnapshot } from '../pricing/invoice-lines.js';

/**
 * Late usage of grouped items (issue 18, docs/design.md §8 Invoice): an earlier invoice's grouped item is
 * re-priced group by group — each group now (from the usage read) against everything billed for that group so
 * far (its usage line plus earlier adjustments of it). A group that appears only in late usage was billed
 * nothing; a group whose records were all cancelled is now zero. Each group's difference is one adjustment
 * line naming the group, so a re-run finds every group billed and adds nothing.
 */

/** An item of an earlier invoice (its period's usage range, product, meter) and what was billed for it so far. */
export interface EarlierItemRow {
  subscription_id: string;
  invoice_id: string;
  period_start: string;
  period_end: string;
  usage_start: Date;
  usage_end: Date;
  product_id: string;
  product_name: string;
  meter_id: string;
  meter_type: MeterType;
  aggregation: string;
  unit: string;
  unique_by: string | null;
  billed_quantity: string;
  billed_amount: string;
  /** A pro-rated item's lines: the interval they cover (service_start/service_end) and their period's bounds. */
  service_start: Date | null;
  service_end: Date | null;
  period_start_at: Date;
  period_end_at: Date;
}

/**
 * The columns of an earlier invoice line's period and usage range, for both late-usage queries (ungrouped in
 * price-periods.ts, grouped here): `i` the invoice, `s` the subscription, `line` the usage line (alias) whose interval counts.
 */
export function earlierRangeColumns(line: string): string {
  return `i.period_start::timestamp AT TIME ZONE 'UTC' AS period_start_at, (i.period_end + 1)::timestamp AT TIME ZONE 'UTC' AS period_end_at,
            GREATEST(COALESCE(${line}.service_start, i.period_start::timestamp AT TIME ZONE 'UTC'), s.trial_end) AS usage_start,
            LEAST(COALESCE(${line}.service_end, (i.period_end + 1)::timestamp AT TIME ZONE 'UTC'), s.canceled_at) AS usage_end,
            ${line}.service_start, ${line}.service_end`;
}

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

/** One group of an earlier invoice's grouped item, as billed so far. */
interface BilledGroupRow extends EarlierItemRow {
  price_model: PriceSnapshot & { group_by: string[] };
  dimensions: LineDimensions;
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
  const r = await q.query<BilledGroupRow>(
    `SELECT i.subscription_id, i.id AS invoice_id, to_char(i.period_start, 'YYYY-MM-DD') AS period_start, to_char(i.period_end, 'YYYY-MM-DD') AS period_end,
            ${earlierRangeColumns('u')},
            u.product_id, p.name AS product_name, u.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by, u.price_model,
            g.dimensions, g.quantity::text AS billed_quantity, g.amount::text AS billed_amount
       FROM unnest($1::text[], $2::timestamptz[]) AS c(subscription_id, period_start)
       JOIN invoices i ON i.subscription_id = c.subscription_id AND i.status NOT IN ('void', 'draft') AND i.reason = 'period'
                      AND i.period_start < c.period_start AND i.period_start >= c.period_start - make_interval(months => $3)
       JOIN subscriptions s ON s.id = i.subscription_id
       JOIN LATERAL (SELECT DISTINCT ON (l.product_id, l.meter_id, l.service_start) l.product_id, l.meter_id, l.price_model, l.position, l.service_start, l.service_end
                       FROM invoice_lines l
                      WHERE l.invoice_id = i.id AND l.type = 'usage' AND l.dimensions IS NOT NULL
                      ORDER BY l.product_id, l.meter_id, l.service_start, l.position) u ON true
       JOIN products p ON p.id = u.product_id
       JOIN meters m ON m.id = u.meter_id
       JOIN LATERAL (SELECT x.dimensions, sum(x.quantity) AS quantity, sum(x.amount) AS amount
                       FROM invoice_lines x JOIN invoices xi ON xi.id = x.invoice_id
                      WHERE xi.status NOT IN ('void', 'draft') AND xi.reason = 'period' AND x.product_id = u.product_id AND x.meter_id = u.meter_id AND x.dimensions IS NOT NULL
                        AND x.service_start IS NOT DISTINCT FROM u.service_start
                        AND ((x.invoice_id = i.id AND x.type = 'usage') OR x.adjusts_invoice_id = i.id)
                      GROUP BY x.dimensions) g ON true
      ORDER BY i.subscription_id, i.period_start, u.position, g.dimensions::text`,
    [periods.map((p) => p.subscription_id), periods.map((p) => new Date(p.startMs)), lookbackMonths],
  );
  for (const row of r.rows) {
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
