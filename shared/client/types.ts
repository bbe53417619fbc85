/**
 * The API's shapes as `meterline/client` speaks them. Written out here rather than derived from the server's
 * typebox schemas so that the client is a package of its own (its `.d.ts` import nothing else: bin/build-client.js
 * packs it); test/unit/client-types.test.ts proves at compile time that each type is exactly the Static type of
 * the schema validating it, so client, server and /openapi.json cannot drift apart.
 */

/** Dimension key → value (`{"model": "gpt-x"}`). */
export type Dimensions = Record<string, string>;

/** One usage record of POST /v1/usage (POST /v1/meters/{id}/usage takes it without `meter_id`). */
export interface UsageRecord {
  /** The meter's id (`mtr_…`) or its key. */
  meter_id: string;
  /** Finite; counters ≥ 0; at most 9 decimal places; |value| ≤ 1e18. */
  value: number;
  /** RFC 3339 with an offset, within [now − 35 days, now + 5 min]. */
  timestamp: string;
  /** Idempotency key: a record re-sent with the same id, meter and timestamp is counted once. */
  id?: string;
  dimensions?: Dimensions;
  /**
   * Deployment meters (operator mode): the customer's external_id — required with an admin token (or
   * customer_id); a customer's own token may name only itself.
   */
  customer?: string;
  /** Deployment meters: the customer's id (`cus_…`), instead of customer. */
  customer_id?: string;
}

/** The answer to one record (202). */
export interface AcceptedUsage {
  id: string;
  meter_id: string;
  value: number;
  timestamp: string;
  received_at: string;
}

/** The answer to a batch: each record settled on its own. */
export interface BatchResult {
  accepted: number;
  rejected: number;
  results: {
    index: number;
    status: 'accepted' | 'rejected';
    id?: string;
    error?: {
      /** validation_failed, value_out_of_range, not_found, meter_inactive, unknown_customer, operator_reported_meter or rate_limited */
      code: string;
      detail: string;
      errors?: { field: string; message: string }[];
    };
  }[];
}

type Stat = number | null;

interface Distribution {
  min?: Stat;
  max?: Stat;
  avg?: Stat;
  p50?: Stat;
  p90?: Stat;
  p95?: Stat;
  p99?: Stat;
}

export interface UsageWindow extends Distribution {
  start: string;
  /** Exclusive. */
  end: string;
  value: Stat;
  count: number;
}

export interface UsageGroup extends Distribution {
  /** The group_by keys; null: records without that dimension. */
  dimensions: Record<string, string | null>;
  value: Stat;
  count: number;
  data: UsageWindow[];
}

/** GET /v1/meters/{id}/usage. */
export interface MeterUsage extends Distribution {
  meter_id: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregation: string;
  unit: string;
  start_date: string;
  end_date: string;
  window: 'hour' | 'day' | 'month' | 'none';
  value: Stat;
  count: number;
  data: UsageWindow[];
  filters?: Record<string, string[]>;
  group_by?: string[];
  groups?: UsageGroup[];
}

export type MeterType = 'counter' | 'gauge' | 'histogram';
/** account: the caller's account's meter; deployment (admin only): one meter for every customer. */
export type MeterScope = 'account' | 'deployment';
/** POST /v1/meters. */
export interface NewMeter {
  name: string;
  unit: string;
  /** Default counter. */
  type?: MeterType;
  /** counter: sum|count|unique_count; gauge: last|max|min|avg; histogram: sum|count|min|max|avg|p50|p90|p95|p99. */
  aggregation: string;
  /** Keys records may carry; empty (default): any keys. */
  dimensions?: string[];
  /** unique_count only (required there): the dimension whose distinct values are counted. */
  unique_by?: string;
  /** Default account. */
  scope?: MeterScope;
  /** A unique name the ingest routes accept in place of the id (`[a-z][a-z0-9_-]{0,63}`, not `mtr_…`); fixed once set. */
  key?: string;
}

export interface Meter {
  id: string;
  name: string;
  unit: string;
  type: MeterType;
  aggregation: string;
  dimensions: string[];
  unique_by: string | null;
  status: 'active' | 'inactive';
  scope: MeterScope;
  key: string | null;
  created_at: string;
  updated_at: string;
}
