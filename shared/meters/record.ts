import type { KV } from '@nats-io/kv';

export const METER_TYPES = ['counter', 'gauge', 'histogram'] as const;
export type MeterType = (typeof METER_TYPES)[number];
/** account: the account's own meter; deployment: one meter of every customer (operator mode, docs/design.md §6). */
export const METER_SCOPES = ['account', 'deployment'] as const;
export type MeterScope = (typeof METER_SCOPES)[number];

export const AGGREGATIONS: Record<MeterType, readonly string[]> = {
  counter: ['sum', 'count', 'unique_count'],
  gauge: ['last', 'max', 'min', 'avg'],
  histogram: ['sum', 'count', 'min', 'max', 'avg', 'p50', 'p90', 'p95', 'p99'],
};

/** Keys a meter may declare (a record carries at most 16 of them). */
export const MAX_DECLARED_DIMENSIONS = 64;

/**
 * What every ingress process knows about a meter, replicated through the NATS KV meter bucket
 * (key = meter id). The control plane writes it with the Postgres row; the ingress watches it.
 */
export interface MeterRecord {
  id: string;
  account_id: string;
  type: MeterType;
  aggregation: string;
  status: 'active' | 'inactive';
  /** The meter's name: CloudEvents name a meter by id or name (`type`). */
  name?: string;
  /** The meter's key (unique per owner, fixed once set): the ingest routes accept it instead of the id. */
  key?: string;
  /**
   * `deployment`: a meter of the whole deployment (operator mode, docs/design.md §6) — every customer records and
   * reads its own usage of it, an admin token records for any customer. Absent: a meter of `account_id`.
   */
  scope?: 'deployment';
  /** Declared dimension keys; empty or absent: any keys (shared/usage/dimensions.ts). */
  dimensions?: string[];
  /** Postgres `updated_at` in epoch ms: lets reconciliation tell which side is newer. */
  updated_at_ms: number;
}

/** Whether `accountId` may record usage to (and read) the meter: its own, or the deployment's. */
export function meterUsableBy(m: MeterRecord, accountId: string): boolean {
  return m.account_id === accountId || m.scope === 'deployment';
}

/**
 * Whether a meter's values are held ≥ 0 at ingest (issue 49), by what its aggregation means: a counter's records
 * are increments (`sum`) or events (`count`, `unique_count`) — a negative one is no count of anything. A gauge is a
 * level and a histogram an observation (a temperature, a balance, a latency delta), which may be below zero; their
 * quantities below zero price at 0 (services/domain/pricing/price-models.ts billableQuantity), never as a refund.
 */
export function refusesNegativeValues(m: Pick<MeterRecord, 'type'>): boolean {
  return m.type === 'counter';
}

/**
 * Whether only an operator (an `admin` token) records usage of the meter (issue 49): a deployment gauge or
 * histogram measures what the operator reports of each customer (seats, storage) — a customer's own record would
 * override or dilute the operator's (its `last`, `min`, `avg`). A deployment counter stays open to the customer's
 * own token: its records (≥ 0) only ever add to its own usage.
 */
export function operatorReported(m: Pick<MeterRecord, 'type' | 'scope'>): boolean {
  return m.scope === 'deployment' && m.type !== 'counter';
}

export function encodeMeter(m: MeterRecord): string {
  return JSON.stringify(m);
}

export function decodeMeter(raw: string): MeterRecord | null {
  try {
    const m = JSON.parse(raw) as MeterRecord;
    if (typeof m.id !== 'string' || typeof m.account_id !== 'string' || !METER_TYPES.includes(m.type)) return null;
    return m;
  } catch {
    return null;
  }
}

export async function putMeter(kv: KV, m: MeterRecord): Promise<void> {
  await kv.put(m.id, encodeMeter(m));
}

/** A meter key's rule (Postgres checks the same in meters.key): lowercase, a letter first, never an id's prefix. */
export const METER_KEY_PATTERN = /^(?!mtr_)[a-z][a-z0-9_-]{0,63}$/;

export const DEPLOYMENT_KEY_OWNER = 'deployment';

/** Who a meter's key is unique within: the deployment for a deployment meter, else its account. */
export function meterKeyOwner(m: Pick<MeterRecord, 'account_id' | 'scope'>): string {
  return m.scope === 'deployment' ? DEPLOYMENT_KEY_OWNER : m.account_id;
}

/**
 * The bucket entry that maps a key to its meter's id (`key.<owner>.<key>`): an ingress that has not yet seen a
 * new meter through its watch finds it by key with one read, as it finds a new id. Keys never change once set,
 * so the entry is written once and never goes stale.
 */
export const meterKeyEntry = (owner: string, key: string): string => `key.${owner}.${key}`;
export const isMeterKeyEntry = (entry: string): boolean => entry.startsWith('key.');

/**
 * Whether a record's `meter_id` (or a path's) names the meter by id: ids carry the `mtr_` prefix, which a key
 * cannot start with, so the two never collide.
 */
export const isMeterId = (ref: string): boolean => ref.startsWith('mtr_');
