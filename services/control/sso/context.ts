import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import type { SsoConfig } from '../../../shared/config-sso.js';
import type { RevocationSink } from '../oauth/context.js';
import type { Sessions } from '../oauth/session.js';
import type { RelyingParty } from './relying-party.js';
import type { SsoTransactions } from './transaction.js';

/** What the SSO routes share: the relying party (null while SSO_ISSUER is empty) and the authorization pages' sessions. */
export interface SsoContext {
  pg: PgPool;
  log: Logger;
  config: SsoConfig;
  relyingParty: RelyingParty | null;
  transactions: SsoTransactions;
  sessions: Sessions;
  revocations: RevocationSink;
}

/** Where the provider sends the browser back: register exactly this at the provider. */
export const ssoRedirectUri = (publicBaseUrl: string): string => `${publicBaseUrl}/console/sso/callback`;
