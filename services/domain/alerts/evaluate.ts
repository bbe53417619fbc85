import type { ClickHouseClient } from '@clickhouse/client';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import { usageQuantity } from '../usage/aggregate.js';
import { queryUsageTotals, queryUsageTotalsByAccount, type UsageTotalsRequest } from '../usage/query.js';
import type { MeterType } from '../../../shared/meters/record.js';
import { monthStart, nextMonthStart, type Period } from '../subscriptions/periods.js';
import { upcomingInvoice } from '../billing/upcoming.js';
import { thresholdBilled } from '../billing/deductions.js';
import { spendableCredits, type SpendableGrant } from '../billing/credits.js';
import {
  activeSubscriptions,
  allAlerts,
  fireCrossings,
  firedKey,
  recordedAmong,
  watchedMeters,
  type Crossing,
} from './store.js';
import type { AlertRow } from './types.js';

/**
 * The alert evaluator (docs/alerts.md): one pass reads every alert, the usage of the meters and customers they
 * watch (one ClickHouse query per meter batch, deduplicated like every usage read) and the upcoming invoices of
 * the customers with spend alerts, and fires each threshold reached for the first time in its billing period.
 * Safe to run in several processes at once and to re-run after a crash: fireCrossings makes each firing once.
 */
export interface AlertDeps {
  pg: PgPool;
  clickhouse: ClickHouseClient;
  database: string;
  /** After a period ends, late records may still cross its thresholds for this long (the billing grace). */
  graceMs: number;
  /**
   * Crossings this process knows are recorded, by period start (a process keeps it across passes): a threshold
   * once recorded stays so for its period, so a steady pass asks Postgres nothing about them.
   */
  known?: Map<number, Set<string>>;
}

/** One customer's value of an alert's metric in one billing period. */
interface Observation {
  alert: AlertRow;
  accountId: string;
  periodStartMs: number;
  value: Decimal;
}

/**
 * The periods usage alerts watch at `now`: the current calendar month in UTC (the billing period of the default terms,
 * services/domain/subscriptions/periods.ts; usage alerts count per calendar month whatever a subscription's interval) and,
 * during the grace after it, the previous one — late records still count. Amount alerts follow each subscription's
 * upcoming invoice, so its own periods.
 */
export function watchedPeriods(now: Date, graceMs: number): Period[] {
  const current = { start: monthStart(now), end: nextMonthStart(now) };
  if (now.getTime() - current.start.getTime() >= graceMs) return [current];
  return [current, { start: monthStart(new Date(current.start.getTime() - 1)), end: current.start }];
}

/** The thresholds a value has reached (thresholds are ascending): an alert fires each of them once per period. */
export function reachedThresholds(thresholds: readonly string[], value: Decimal): string[] {
  return thresholds.filter((t) => value.gte(t));
}

/** One evaluation pass at `now`; returns the crossings it fired (others' and earlier ones excluded). */
export async function evaluateAlerts(deps: AlertDeps, now = new Date()): Promise<Crossing[]> {
  const alerts = await allAlerts(deps.pg);
  if (alerts.length === 0) return [];
  const periods = watchedPeriods(now, deps.graceMs);
  const [usage, spend] = await Promise.all([
    observeUsage(
      deps,
      alerts.filter((a) => a.metric === 'usage'),
      periods,
    ),
    observeSpend(
      deps,
      alerts.filter((a) => a.metric === 'amount' && a.account_id !== null),
      now,
    ),
  ]);
  const known = deps.known ?? new Map<number, Set<string>>();
  for (const start of known.keys()) if (!periods.some((p) => p.start.getTime() === start)) known.delete(start);
  const keyOf = (x: Crossing) => firedKey(x.alertId, x.accountId, x.periodStartMs, x.threshold);
  const isKnown = (x: Crossing) => known.get(x.periodStartMs)?.has(keyOf(x)) ?? false;
  const remember = (x: Crossing) => {
    let set = known.get(x.periodStartMs);
    if (!set) known.set(x.periodStartMs, (set = new Set()));
    set.add(keyOf(x));
  };
  const candidates: Crossing[] = [];
  for (const o of [...usage, ...spend]) {
    for (const threshold of reachedThresholds(o.alert.thresholds, o.value)) {
      const x: Crossing = {
        alertId: o.alert.id,
        accountId: o.accountId,
        metric: o.alert.metric,
        meterId: o.alert.meter_id,
        currency: o.alert.currency,
        threshold,
        value: canonicalDecimal(o.value),
        periodStartMs: o.periodStartMs,
      };
      if (!isKnown(x)) candidates.push(x);
    }
  }
  const recorded = await recordedAmong(deps.pg, candidates);
  const crossings = candidates.filter((x) => !recorded.has(keyOf(x)));
  for (const x of candidates) if (recorded.has(keyOf(x))) remember(x);
  // One order for every evaluator: concurrent passes inserting the same trigger rows wait, never deadlock.
  crossings.sort((x, y) => (keyOf(x) < keyOf(y) ? -1 : keyOf(x) > keyOf(y) ? 1 : 0));
  const fired = await fireCrossings(deps.pg, crossings);
  // Committed: each is recorded now, by this pass or by another evaluator that got there first.
  for (const x of crossings) remember(x);
  return fired;
}

/**
 * Usage alerts: a customer's alerts read (customer, meter) pairs in queryUsageTotals' batched queries; a
 * deployment-wide alert reads every customer of its meter at once (queryUsageTotalsByAccount).
 */
async function observeUsage(deps: AlertDeps, alerts: AlertRow[], periods: Period[]): Promise<Observation[]> {
  if (alerts.length === 0) return [];
  const meters = await watchedMeters(deps.pg, [...new Set(alerts.map((a) => a.meter_id!))]);
  const out: Observation[] = [];
  const pairs: { alert: AlertRow; period: Period; req: UsageTotalsRequest }[] = [];
  const wide = new Map<string, AlertRow[]>();
  for (const alert of alerts) {
    const meter = meters.get(alert.meter_id!);
    if (!meter) continue;
    if (alert.account_id === null) {
      const list = wide.get(meter.id);
      if (list) list.push(alert);
      else wide.set(meter.id, [alert]);
      continue;
    }
    for (const period of periods)
      pairs.push({
        alert,
        period,
        req: {
          accountId: alert.account_id,
          meterId: meter.id,
          type: meter.type,
          startMs: period.start.getTime(),
          endMs: period.end.getTime(),
          uniqueBy: meter.unique_by ?? undefined,
        },
      });
  }
  const totals = await queryUsageTotals(
    deps.clickhouse,
    deps.database,
    pairs.map((p) => p.req),
  );
  pairs.forEach((p, i) =>
    out.push({
      alert: p.alert,
      accountId: p.alert.account_id!,
      periodStartMs: p.period.start.getTime(),
      value: usageQuantity(totals[i]!, meters.get(p.alert.meter_id!)!.aggregation),
    }),
  );
  const byType = new Map<MeterType, string[]>();
  for (const meterId of wide.keys()) {
    const type = meters.get(meterId)!.type;
    byType.set(type, [...(byType.get(type) ?? []), meterId]);
  }
  for (const period of periods) {
    for (const [type, meterIds] of byType) {
      const usage = await queryUsageTotalsByAccount(deps.clickhouse, deps.database, {
        meterIds,
        type,
        startMs: period.start.getTime(),
        endMs: period.end.getTime(),
      });
      for (const [meterId, byAccount] of usage) {
        const aggregation = meters.get(meterId)!.aggregation;
        for (const [accountId, stats] of byAccount)
          for (const alert of wide.get(meterId) ?? [])
            out.push({
              alert,
              accountId,
              periodStartMs: period.start.getTime(),
              value: usageQuantity(stats, aggregation),
            });
      }
    }
  }
  return out;
}

/** Upcoming invoices priced at once per pass (each is a ClickHouse read and a few Postgres ones). */
const SPEND_CONCURRENCY = 8;

/**
 * Spend alerts: the customer's current period invoiced so far in the alert's currency — the sum of the
 * `amount`s of the upcoming invoices of its active subscriptions in that currency, priced by upcomingInvoice
 * exactly as GET /v1/billing/invoices/upcoming shows them (tiers, minimums, tax, prepaid credit), plus what the
 * period's threshold invoices already billed.
 */
async function observeSpend(deps: AlertDeps, alerts: AlertRow[], now: Date): Promise<Observation[]> {
  if (alerts.length === 0) return [];
  const subs = await activeSubscriptions(deps.pg, [...new Set(alerts.map((a) => a.account_id!))]);
  const priced = new Map<string, { amount: string; periodStartMs: number } | null>();
  // One credit pool per customer, spent by its subscriptions' upcoming invoices in turn: counted once in the sum.
  const credits = new Map<string, SpendableGrant[]>();
  for (const g of await spendableCredits(deps.pg, [...new Set(subs.map((s) => s.account_id))], now))
    credits.set(g.account_id, [...(credits.get(g.account_id) ?? []), g]);
  for (const s of subs) if (!credits.has(s.account_id)) credits.set(s.account_id, []);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(SPEND_CONCURRENCY, subs.length) }, async () => {
      while (next < subs.length) {
        const s = subs[next++]!;
        const u = await upcomingInvoice(deps, s.account_id, s.id, now, credits.get(s.account_id)).catch(() => null); // canceled meanwhile
        priced.set(s.id, u && { amount: u.amount, periodStartMs: u.periodStartMs });
      }
    }),
  );
  // The upcoming invoice deducts what threshold invoices (progressive billing) already billed; the period's spend
  // is both — one query for every priced subscription.
  const refs = [...priced].flatMap(([id, u]) => (u ? [{ subscription_id: id, startMs: u.periodStartMs }] : []));
  const billed = await thresholdBilled(deps.pg, refs);
  refs.forEach((r, i) => {
    const u = priced.get(r.subscription_id)!;
    u.amount = billed[i]!.plus(u.amount).toString();
  });
  const out: Observation[] = [];
  for (const alert of alerts) {
    let value = new Decimal(0);
    let periodStartMs = monthStart(now).getTime();
    for (const s of subs) {
      const u = s.account_id === alert.account_id && s.currency === alert.currency ? priced.get(s.id) : null;
      if (!u) continue;
      value = value.plus(u.amount);
      periodStartMs = u.periodStartMs;
    }
    out.push({ alert, accountId: alert.account_id!, periodStartMs, value });
  }
  return out;
}
