import type { RouteModuleFactory } from '../../../shared/http/route.js';
import { openRevocationBucket } from '../../../shared/auth/revocations.js';
import { RevocationReplicator } from '../oauth/housekeeping.js';
import { Sessions } from '../oauth/session.js';
import { registerSsoCallback } from './callback.js';
import { ssoRedirectUri } from './context.js';
import { RelyingParty } from './relying-party.js';
import { registerSsoStart } from './start.js';
import { SsoTransactions } from './transaction.js';

/**
 * Single sign-on of operator staff (docs/sso.md): /console/sso/start and /console/sso/callback. It ends in the
 * authorization pages' own session (services/control/oauth/session.ts: same cookie, same table), so the OAuth
 * pages — and the console through them — continue as after a password sign-in.
 */
export const ssoModule: RouteModuleFactory = (deps) => {
  const issuer = deps.config.PUBLIC_BASE_URL;
  const secure = issuer.startsWith('https://');
  let replicator: RevocationReplicator | undefined;
  return {
    name: 'sso',
    area: 'control',
    async start() {
      if (!deps.config.SSO_ISSUER) return;
      const bucket = await openRevocationBucket(deps.nats, deps.natsNames.revocationBucket);
      replicator = new RevocationReplicator(deps.pg, bucket, deps.log);
    },
    register(server) {
      const sso = {
        pg: deps.pg,
        log: deps.log,
        config: deps.config,
        relyingParty: deps.config.SSO_ISSUER ? new RelyingParty(deps.config, ssoRedirectUri(issuer)) : null,
        transactions: new SsoTransactions(deps.config.SECRET_KEY, secure),
        sessions: new Sessions(deps.pg, deps.config.SECRET_KEY, secure),
        // A role change revokes the user's live access tokens; the oauth module's housekeeping republishes any
        // that did not get through.
        revocations: {
          publish: async (entries: Parameters<RevocationReplicator['publish']>[0]) => replicator?.publish(entries),
        },
      };
      registerSsoStart(server, sso);
      registerSsoCallback(server, sso);
    },
  };
};
