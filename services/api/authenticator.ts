import type { Authenticator } from '../../shared/auth/types.js';
import type { Infra } from '../../shared/infra.js';
import { SigningKeys } from '../../shared/auth/signing-keys.js';
import { JwtAuthenticator } from '../../shared/auth/access-tokens.js';

/** Builds the shared token check used by ingress and control plane. */
export async function createAuthenticator(infra: Infra): Promise<Authenticator> {
  const keys = new SigningKeys(infra.pg, infra.config.SECRET_KEY);
  await keys.load();
  return new JwtAuthenticator(keys, infra.config.PUBLIC_BASE_URL);
}
