import type { MeterType } from '../../../shared/meters/record.js';
import type { AccountUsageTarget } from '../usage/account-usage.js';
import type { Access } from './access.js';
import { entitlementPeriod } from './periods.js';
import type { LoadedEntitlement } from './store.js';
import type { GrantRow } from './types.js';

/** The current period's answer of a metered entitlement, as of the last usage read. */
export interface MeteredState {
  periodStartMs: number;
  periodEndMs: number;
  access: Access;
}

/** One entitlement in the api's table (./table.ts). */
export interface Entry {
  row: LoadedEntitlement;
  grants: GrantRow[];
  state?: MeteredState;
}

/**
 * Whether a refresh pass reads this metered entry's usage from ClickHouse. `moved`: the accounts a "usage moved"
 * signal named since the previous pass began (services/domain/usage/usage-moved.ts), or undefined for a full read
 * (a reload, the safety-net interval, a signal possibly lost). Besides its account moving, an entry is read when
 * nothing was read for it yet, when a new period began since (its held usage is the last period's), and always on
 * a test clock (a clock's time moves without any usage moving).
 */
export function mustReadUsage(entry: Entry, moved: ReadonlySet<string> | undefined, nowMs: number): boolean {
  if (moved === undefined || entry.row.clock_time !== null) return true;
  const state = entry.state;
  if (!state || nowMs < state.periodStartMs || nowMs >= state.periodEndMs) return true;
  return moved.has(entry.row.account_id);
}

/** The metered entries (with a meter) of the table: the ones whose answer depends on usage. */
export function* meteredEntries(entries: Iterable<ReadonlyMap<string, Entry>>): Generator<Entry> {
  for (const byFeature of entries)
    for (const entry of byFeature.values()) if (entry.row.type === 'metered' && entry.row.meter_type) yield entry;
}

/** The usage read of a metered entitlement (one with a meter) in its period containing `now`. */
export function usageTargetOf(row: LoadedEntitlement, now: Date): AccountUsageTarget {
  const period = entitlementPeriod(row.period!, now);
  return {
    accountId: row.account_id,
    meterId: row.meter_id!,
    type: row.meter_type as MeterType,
    aggregation: row.aggregation!,
    uniqueBy: row.unique_by,
    start: period.start,
    end: period.end,
    dimension: row.dimension_key ? { key: row.dimension_key, value: row.dimension_value! } : null,
  };
}
