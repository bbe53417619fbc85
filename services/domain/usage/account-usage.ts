import type { ClickHouseClient } from '@clickhouse/client';
import type { Decimal } from '../../../shared/money/decimal.js';
import type { MeterType } from '../../../shared/meters/record.js';
import { queryAccountTotals } from './account-totals.js';
import { usageQuantity } from './aggregate.js';

/** One customer's usage of one meter over [start, end), as its meter aggregates it. */
export interface AccountUsageTarget {
  accountId: string;
  meterId: string;
  type: MeterType;
  aggregation: string;
  /** The meter's unique_by (used only by unique_count). */
  uniqueBy: string | null;
  start: Date;
  end: Date;
  /** Only the records whose dimension `key` is `value` (an entitlement of one dimension value, issue 46). */
  dimension?: { key: string; value: string } | null;
}

/**
 * The usage of many (customer, meter, period) at once, in target order: the value `GET /v1/meters/{id}/usage`
 * shows for that customer and range (the same read, services/domain/usage/account-totals.ts, and the same aggregation
 * rule, usageValue) — deduplicated records, corrections and late records included. Entitlements (the api's
 * in-memory table and the exhaustion evaluator) read through this; so can anything else that compares a
 * customer's period usage with a number (alerts).
 */
export async function accountUsage(
  ch: ClickHouseClient,
  database: string,
  targets: readonly AccountUsageTarget[],
): Promise<Decimal[]> {
  const totals = await queryAccountTotals(
    ch,
    database,
    targets.map((t) => ({
      meterId: t.meterId,
      type: t.type,
      uniqueBy: t.aggregation === 'unique_count' && t.uniqueBy ? t.uniqueBy : undefined,
      startMs: t.start.getTime(),
      endMs: t.end.getTime(),
      accounts: [t.accountId],
      ...(t.dimension ? { dimension: t.dimension } : {}),
    })),
  );
  return targets.map((t, i) => {
    const stats = totals[i]!.get(t.accountId) ?? { start: t.start.getTime(), end: t.end.getTime(), count: 0, sum: '0' };
    return usageQuantity(stats, t.aggregation);
  });
}
