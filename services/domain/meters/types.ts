import type { MeterRecord, MeterScope, MeterType } from '../../../shared/meters/record.js';

export interface NewMeter {
  name: string;
  unit: string;
  type: MeterType;
  aggregation: string;
  dimensions: string[];
  uniqueBy: string | null;
  scope: MeterScope;
  key: string | null;
}

/** What a PATCH asks for; `type`/`aggregation` only to be refused when they differ (they are fixed). */
export interface MeterChange {
  name?: string;
  unit?: string;
  status?: 'active' | 'inactive';
  type?: MeterType;
  aggregation?: string;
  dimensions?: string[];
  /** Only to set a key on a meter that has none: a key is fixed once set (409 otherwise). */
  key?: string;
}

export interface MeterRow {
  id: string;
  account_id: string;
  name: string;
  unit: string;
  type: MeterType;
  aggregation: string;
  dimensions: string[];
  unique_by: string | null;
  status: 'active' | 'inactive';
  scope: MeterScope;
  key: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The registry entry the ingress reads (NATS KV meter bucket). */
export function toRecord(row: MeterRow): MeterRecord {
  return {
    id: row.id,
    account_id: row.account_id,
    name: row.name,
    type: row.type,
    aggregation: row.aggregation,
    status: row.status,
    ...(row.scope === 'deployment' ? { scope: 'deployment' as const } : {}),
    ...(row.key ? { key: row.key } : {}),
    // Absent when none are declared: the record of an open meter is what it was before dimensions.
    ...(row.dimensions.length ? { dimensions: row.dimensions } : {}),
    updated_at_ms: row.updated_at.getTime(),
  };
}

/** What a meter write needs of the registry (registry.ts): the meter's record put in NATS KV inside the row's transaction. */
export interface MeterRecordPut {
  /** `keySet`: the row's key was set by this write (a key is fixed once set, so its bucket entry is written once). */
  put(row: MeterRow, keySet: boolean): Promise<void>;
}
