import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { SigningKeys } from '../../../shared/auth/signing-keys.js';
import { openRevocationBucket } from '../../../shared/auth/revocations.js';
import { PeriodicTask } from '../../../shared/periodic.js';
import type { OAuthContext } from './context.js';
import { RevocationReplicator } from './housekeeping.js';
import { Sessions } from './session.js';
import { SignInThrottle } from './sign-in-throttle.js';
import { registerAuthorize } from './authorize.js';
import { registerToken } from './token.js';
import { registerRevoke } from './revoke.js';
import { registerMetadata } from './metadata.js';

const HOUSEKEEPING_INTERVAL_MS = 30_000;

/**
 * The OAuth 2.0 authorization server (docs/design.md §7): /oauth/authorize, /oauth/token, /oauth/revoke,
 * /oauth/jwks and /.well-known/oauth-authorization-server. Endpoints answer with RFC 6749 error
 * bodies, not the /v1 problem documents.
 */
export const oauthRoutes: RouteModuleFactory = async (deps) => {
  const issuer = deps.config.PUBLIC_BASE_URL;
  const keys = new SigningKeys(deps.pg, deps.config.SECRET_KEY);
  let replicator: RevocationReplicator | undefined;
  const housekeeping = new PeriodicTask({
    name: 'oauth housekeeping',
    everyMs: HOUSEKEEPING_INTERVAL_MS,
    log: deps.log,
    run: () => replicator!.housekeeping(),
  });
  let throttle: SignInThrottle | undefined;
  const started = <T>(part: T | undefined): T => {
    if (!part) throw new Error('oauth module not started');
    return part;
  };
  // The routes are registered with these, and reach the NATS-backed parts opened by start() per request, so
  // the routes (and so the OpenAPI document, services/docs/) exist before anything has connected.
  const oauth: OAuthContext = {
    pg: deps.pg,
    log: deps.log,
    issuer,
    accessTokenTtlSeconds: deps.config.ACCESS_TOKEN_TTL_SECONDS,
    keys,
    revocations: { publish: (entries) => started(replicator).publish(entries) },
  };
  const signInThrottle = {
    admit: (address: string, email: string) => started(throttle).admit(address, email),
    recordSuccess: (address: string, email: string) => started(throttle).recordSuccess(address, email),
  };

  return {
    name: 'oauth',
    area: 'control',
    async start() {
      await keys.load();
      replicator = new RevocationReplicator(
        deps.pg,
        await openRevocationBucket(deps.nats, deps.natsNames.revocationBucket),
        deps.log,
      );
      throttle = await SignInThrottle.open(
        deps.nats,
        deps.natsNames.signInThrottleBucket,
        deps.config.SIGN_IN_BACKOFF_BASE_SECONDS * 1000,
      );
      void housekeeping.start();
    },
    register(server) {
      const sessions = new Sessions(deps.pg, deps.config.SECRET_KEY, issuer.startsWith('https://'));
      registerMetadata(server, { issuer, keys });
      registerAuthorize(server, { oauth, sessions, throttle: signInThrottle, sso: deps.config });
      registerToken(server, oauth);
      registerRevoke(server, oauth);
    },
    stop: () => housekeeping.stop(),
  };
};
