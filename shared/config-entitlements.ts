import { int, type VarSpec } from './config-parsers.js';

/** The api's in-memory entitlement table (docs/entitlements.md), a part of the one Config (shared/config.ts). */
export interface EntitlementsConfig {
  /**
   * Seconds between the table's full usage reads; between them it re-reads only the accounts a "usage moved"
   * signal named. The full read heals a lost signal (core NATS may drop one).
   */
  ENTITLEMENT_FULL_REFRESH_SECONDS: number;
}

export const ENTITLEMENTS_SPEC: { [K in keyof EntitlementsConfig]: VarSpec<EntitlementsConfig[K]> } = {
  ENTITLEMENT_FULL_REFRESH_SECONDS: {
    parse: int(1, 3_600),
    default: 10,
    describe:
      'seconds between the entitlement table’s full usage reads; between them each api re-reads only the customers whose usage the consumer (or a correction) signalled as moved — the full read bounds how long a lost signal can leave a check behind (docs/entitlements.md)',
  },
};
