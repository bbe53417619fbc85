import { int, type VarSpec } from './config-parsers.js';

/** The customer portal (docs/portal.md), a part of the one Config (shared/config.ts). */
export interface PortalConfig {
  /** How long a portal session's link may wait to be opened, and how long the browser session then lasts. */
  PORTAL_SESSION_TTL_SECONDS: number;
}

export const PORTAL_SPEC: { [K in keyof PortalConfig]: VarSpec<PortalConfig[K]> } = {
  PORTAL_SESSION_TTL_SECONDS: {
    parse: int(60, 86_400),
    default: 3_600,
    describe:
      'how long a customer portal link (POST /v1/portal_sessions) works before it is opened, and how long the portal session it opens lasts (docs/portal.md)',
  },
};
