import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import type { SigningKeySource, VerificationKeySource } from '../../../shared/auth/access-tokens.js';
import type { Revocation } from '../../../shared/auth/revocations.js';

/** Where revoked access-token ids go: the NATS KV revocation list every api process watches. */
export interface RevocationSink {
  /** Best effort: housekeeping republishes whatever did not get through. */
  publish(entries: readonly Revocation[]): Promise<void>;
}

/** What the OAuth endpoints and the token store share. */
export interface OAuthContext {
  pg: PgPool;
  log: Logger;
  /** PUBLIC_BASE_URL: the `iss` of tokens, metadata and authorization responses. */
  issuer: string;
  accessTokenTtlSeconds: number;
  keys: SigningKeySource & VerificationKeySource;
  revocations: RevocationSink;
}

export const AUTHORIZATION_CODE_TTL_SECONDS = 60;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
export const SESSION_TTL_SECONDS = 8 * 3600;
