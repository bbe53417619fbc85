import type { Authenticator } from '../../../shared/auth/types.js';
import type { Infra } from '../../../shared/infra.js';
import { SigningKeys } from '../../../shared/auth/signing-keys.js';
import { JwtAuthenticator } from '../../../shared/auth/access-tokens.js';
import { KvRevocationList } from '../../../shared/auth/revocations.js';

/**
 * Builds the shared token check used by ingress and control plane: public keys from Postgres once
 * at start, the revocation list replicated from NATS KV; no database access per request.
 * The revocation watch ends when the infra's NATS connection closes.
 */
export async function createAuthenticator(infra: Infra): Promise<Authenticator> {
  const keys = new SigningKeys(infra.pg, infra.config.SECRET_KEY);
  await keys.load();
  const revocations = await KvRevocationList.start(
    infra.nats,
    infra.natsNames.revocationBucket,
    infra.log,
    infra.config.WATCH_MAX_STALENESS_SECONDS * 1000,
  );
  infra.metrics.gauge(
    'meterline_revocation_watch_fresh',
    '1 while the revocation list (NATS KV watch) is confirmed current; 0 once unconfirmed for WATCH_MAX_STALENESS_SECONDS: every token check answers 503',
    () => (revocations.health().ok ? 1 : 0),
  );
  return new JwtAuthenticator(keys, infra.config.PUBLIC_BASE_URL, revocations);
}
