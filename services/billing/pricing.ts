import type { PgClient, PgPool } from '../../shared/clients/postgres.js';
import type { MeterType } from '../../shared/meters/record.js';
import { queryUsageTotals, type UsageTotalsRequest } from '../../shared/usage/query.js';
import { runPooled } from '../workers/pool.js';
import { timed, type BillingDeps, type BillingTimings } from './deps.js';
import { priceInvoice, type InvoiceToPrice, type PricedInvoice } from './invoice-lines.js';

/** A subscription's period to price: usage counts from periodStart up to usageEndMs (exclusive). */
export interface PeriodToPrice {
  subscription_id: string;
  account_id: string;
  currency: string;
  startMs: number;
  /** The period's end; a canceled subscription's cancellation instant if earlier; now for the upcoming invoice. */
  usageEndMs: number;
}

interface ItemRow {
  subscription_id: string;
  product_id: string;
  product_name: string;
  price: string;
  meter_id: string | null;
  meter_type: MeterType | null;
  aggregation: string | null;
  unit: string | null;
  /** unique_count meters: the dimension counted. */
  unique_by: string | null;
}

/** Subscriptions priced per piscina task: large enough to share the hand-off cost, small enough to spread. */
const INVOICES_PER_TASK = 250;

/** Items of many subscriptions in printed order, with their product's name and price and their meter. */
async function itemsOf(q: PgPool | PgClient, subscriptionIds: string[]): Promise<Map<string, ItemRow[]>> {
  const out = new Map<string, ItemRow[]>(subscriptionIds.map((id) => [id, []]));
  const r = await q.query<ItemRow>(
    `SELECT si.subscription_id, si.product_id, p.name AS product_name, p.price::text AS price,
            si.meter_id, m.type AS meter_type, m.aggregation, m.unit, m.unique_by
       FROM subscription_items si JOIN products p ON p.id = si.product_id LEFT JOIN meters m ON m.id = si.meter_id
      WHERE si.subscription_id = ANY($1) ORDER BY si.subscription_id, si.position`,
    [subscriptionIds],
  );
  for (const row of r.rows) out.get(row.subscription_id)!.push(row);
  return out;
}

/**
 * Prices many subscription periods: items from Postgres (one query), usage of every metered item from
 * ClickHouse (one query per distinct range and meter type), line maths in the piscina pool (many invoices
 * per task) — or inline without a pool: the upcoming invoice, a single one, is not worth a thread hop.
 */
export async function pricePeriods(
  deps: Pick<BillingDeps, 'clickhouse' | 'database'> & { linesPool?: BillingDeps['linesPool'] },
  q: PgPool | PgClient,
  periods: PeriodToPrice[],
  opts: { timings?: BillingTimings } = {},
): Promise<PricedInvoice[]> {
  if (periods.length === 0) return [];
  const items = await timed(opts.timings, 'postgres_ms', () => itemsOf(q, periods.map((p) => p.subscription_id)));
  const requests: UsageTotalsRequest[] = [];
  const requestIndex = new Map<string, number>();
  for (const p of periods) {
    for (const it of items.get(p.subscription_id)!) {
      if (!it.meter_id) continue;
      requestIndex.set(`${p.subscription_id}:${it.meter_id}`, requests.length);
      requests.push({ accountId: p.account_id, meterId: it.meter_id, type: it.meter_type!, startMs: p.startMs, endMs: p.usageEndMs, uniqueBy: it.unique_by ?? undefined });
    }
  }
  const usage = requests.length ? await timed(opts.timings, 'clickhouse_ms', () => queryUsageTotals(deps.clickhouse, deps.database, requests)) : [];
  const toPrice: InvoiceToPrice[] = periods.map((p) => ({
    subscription_id: p.subscription_id,
    currency: p.currency,
    items: items.get(p.subscription_id)!.map((it) => ({
      product_id: it.product_id,
      product_name: it.product_name,
      unit_price: it.price,
      meter: it.meter_id ? { id: it.meter_id, aggregation: it.aggregation!, unit: it.unit!, usage: usage[requestIndex.get(`${p.subscription_id}:${it.meter_id}`)!]! } : null,
    })),
  }));
  const pool = deps.linesPool;
  if (!pool) return toPrice.map(priceInvoice);
  return timed(opts.timings, 'piscina_ms', async () => {
    const tasks: Promise<PricedInvoice[]>[] = [];
    for (let i = 0; i < toPrice.length; i += INVOICES_PER_TASK) {
      tasks.push(runPooled(pool, { invoices: toPrice.slice(i, i + INVOICES_PER_TASK) }, 'invoice maths'));
    }
    return (await Promise.all(tasks)).flat();
  });
}
