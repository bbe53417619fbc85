import { int, oneOf, type VarSpec } from './config-parsers.js';

/**
 * docs/usage.md "Counted once": `window` (the default) and `id` claim each identity in usage_claims
 * (services/domain/usage/claims.ts); `timestamp` (also spelt `id_and_timestamp`, its former name) claims nothing.
 */
export const USAGE_IDENTITIES = ['window', 'id', 'timestamp', 'id_and_timestamp'] as const;

/** How usage records are counted and settled into rollups (docs/usage.md), a part of the one Config (shared/config.ts). */
export interface UsageConfig {
  /** What makes two usage records one (docs/usage.md "Counted once"): (meter, account, id) or also the timestamp. */
  USAGE_IDENTITY: (typeof USAGE_IDENTITIES)[number];
  /** Seconds within which a record id is one record whatever its timestamp (USAGE_IDENTITY=window). */
  USAGE_IDENTITY_WINDOW: number;
  /** How often each consumer settles quiet hours, minutes and seconds into the rollups (docs/usage.md). */
  USAGE_SETTLE_INTERVAL_MS: number;
}

export const USAGE_SPEC: { [K in keyof UsageConfig]: VarSpec<UsageConfig[K]> } = {
  USAGE_IDENTITY: {
    parse: oneOf(USAGE_IDENTITIES),
    default: 'window',
    describe:
      'what makes a usage record one record (docs/usage.md "Counted once"): `window` — (meter, account, id) within `USAGE_IDENTITY_WINDOW` of the first accept, beyond it the timestamp joins; `id` — (meter, account, id) forever (every id looked up: about 3× the ClickHouse CPU); `timestamp` (or `id_and_timestamp`) — (meter, account, id, timestamp)',
  },
  USAGE_IDENTITY_WINDOW: {
    parse: int(1, 35 * 86_400),
    default: 86_400,
    describe:
      'seconds, measured on accept times, within which a record id sent again counts once whatever its timestamp (`USAGE_IDENTITY=window`)',
  },
  USAGE_SETTLE_INTERVAL_MS: {
    parse: int(100, 60_000),
    default: 1_000,
    describe:
      "how often each consumer settles quiet hours, minutes and seconds of usage into the rollups; lower leaves fewer raw rows for a hot meter's read at more ClickHouse CPU (250: p99 of the read during 100,000 records/s 245 → 173 ms, batched ingest +10 % ClickHouse CPU per record; docs/benchmarks.md)",
  },
};
