import * as oidc from 'openid-client';
import type { SsoConfig } from '../../../shared/config-sso.js';

/** Why a callback's code did not yield a valid id_token; each has its own page (services/control/sso/pages.ts). */
export type RedeemFailure =
  | 'code_rejected'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'nonce_mismatch'
  | 'state_mismatch'
  | 'provider_error'
  | 'id_token_invalid'
  | 'provider_unreachable';

export class RedeemError extends Error {
  constructor(
    readonly failure: RedeemFailure,
    message: string,
    readonly providerError?: string,
  ) {
    super(message);
  }
}

const SCOPE = 'openid email profile';

/**
 * meterline as an OpenID Connect relying party of SSO_ISSUER, through `openid-client`: discovery on first use (and
 * again after a failure, so an api that started while the provider was down recovers), the authorization code flow
 * with PKCE S256, state and nonce, and the id_token's signature checked against the provider's JWKS
 * (enableNonRepudiationChecks) on top of its issuer, audience, nonce and expiry.
 */
export class RelyingParty {
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(
    private readonly config: SsoConfig,
    readonly redirectUri: string,
  ) {}

  private discovered(): Promise<oidc.Configuration> {
    if (this.configuration) return this.configuration;
    const { SSO_ISSUER, SSO_CLIENT_ID, SSO_CLIENT_SECRET } = this.config;
    const configuration = oidc
      .discovery(
        new URL(SSO_ISSUER),
        SSO_CLIENT_ID,
        undefined,
        oidc.ClientSecretBasic(SSO_CLIENT_SECRET),
        // http:// issuers are for local providers (development, tests); production ones are https.
        SSO_ISSUER.startsWith('http://') ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .then((discovered) => {
        oidc.enableNonRepudiationChecks(discovered);
        return discovered;
      });
    this.configuration = configuration;
    configuration.catch(() => {
      if (this.configuration === configuration) this.configuration = undefined;
    });
    return configuration;
  }

  async authorizationUrl(t: { state: string; nonce: string; verifier: string }): Promise<URL> {
    const configuration = await this.discovered().catch((err: Error) => {
      throw new RedeemError('provider_unreachable', err.message);
    });
    return oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: SCOPE,
      state: t.state,
      nonce: t.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(t.verifier),
      code_challenge_method: 'S256',
    });
  }

  /** Redeems the callback's code and returns the validated id_token's claims; throws RedeemError. */
  async redeem(
    callbackUrl: URL,
    t: { state: string; nonce: string; verifier: string },
  ): Promise<Record<string, unknown>> {
    const configuration = await this.discovered().catch((err: Error) => {
      throw new RedeemError('provider_unreachable', err.message);
    });
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: t.verifier,
        expectedState: t.state,
        expectedNonce: t.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw new RedeemError('id_token_invalid', 'the token response carried no id_token');
      return claims as Record<string, unknown>;
    } catch (err) {
      throw err instanceof RedeemError ? err : classify(err);
    }
  }
}

/** openid-client's error → the failure the user is shown. */
function classify(err: unknown): RedeemError {
  const e = err as { message?: string; error?: string; error_description?: string; code?: string; cause?: unknown };
  const message = e.message ?? String(err);
  if (err instanceof oidc.AuthorizationResponseError)
    return new RedeemError('provider_error', e.error_description ?? message, e.error);
  if (err instanceof oidc.ResponseBodyError)
    return e.error === 'invalid_grant'
      ? new RedeemError('code_rejected', e.error_description ?? message, e.error)
      : new RedeemError('provider_error', e.error_description ?? message, e.error);
  const claim = comparedClaim(err);
  if (claim === 'aud' || claim === 'azp') return new RedeemError('wrong_audience', message);
  if (claim === 'iss') return new RedeemError('wrong_issuer', message);
  if (claim === 'nonce') return new RedeemError('nonce_mismatch', message);
  if (claim === 'state' || /state/i.test(message)) return new RedeemError('state_mismatch', message);
  return new RedeemError('id_token_invalid', message);
}

/** The JWT claim a failed comparison names: oauth4webapi's error carries it, wrapped by openid-client's ClientError. */
function comparedClaim(err: unknown): string | undefined {
  for (let e = err as { cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    const claim = (e.cause as { claim?: unknown } | undefined)?.claim;
    if (typeof claim === 'string') return claim;
  }
  return undefined;
}
