import type { RouteRegistry } from '../../../shared/http/route.js';
import type { RequestContext } from '../../../shared/http/context.js';
import { withAuditActor } from '../../../shared/audit/actor.js';
import { identityOfClaims } from '../../domain/sso/identity.js';
import { signInWithSso } from '../../domain/sso/sign-in.js';
import type { SsoContext } from './context.js';
import { ssoFailurePage } from './pages.js';
import { RedeemError } from './relying-party.js';

const OPERATION = 'GET /console/sso/callback';

/**
 * GET /console/sso/callback?code&state: checks the state against this browser's transaction, redeems the code
 * (PKCE verifier; id_token issuer, audience, nonce and signature checked by openid-client), requires a verified
 * email of an allowed domain, matches or provisions the operator user with the mapped role, and starts the
 * authorization pages' session a password sign-in starts — then back to where the sign-in began.
 */
export function registerSsoCallback(server: RouteRegistry, sso: SsoContext): void {
  server.route({
    method: 'GET',
    path: '/console/sso/callback',
    auth: 'public',
    handler: (ctx) => callback(sso, ctx),
    doc: {
      summary: "The identity provider's redirect back: validates the answer and signs the user in",
      tags: ['sso'],
      responses: {
        '303': { description: 'Signed in: to the authorization request the sign-in began from, or /console' },
        '400': {
          description: 'HTML page: state mismatch, replayed code, wrong audience, invalid token',
          contentType: 'text/html',
        },
        '403': {
          description: 'HTML page: email unverified, domain not allowed, not an operator',
          contentType: 'text/html',
        },
      },
    },
  });
}

async function callback(sso: SsoContext, ctx: RequestContext) {
  if (!sso.relyingParty) return ssoFailurePage('sso_off');
  const clear = sso.transactions.clear();
  const transaction = sso.transactions.read(ctx.headers.cookie);
  if (!transaction || ctx.query.get('state') !== transaction.state)
    return ssoFailurePage('state_mismatch', { setCookie: clear });
  let claims: Record<string, unknown>;
  try {
    claims = await sso.relyingParty.redeem(new URL(`${sso.relyingParty.redirectUri}?${ctx.rawQuery}`), transaction);
  } catch (err) {
    if (!(err instanceof RedeemError)) throw err;
    sso.log.warn({ failure: err.failure, reason: err.message }, 'sso sign-in refused');
    return ssoFailurePage(err.failure, { detail: err.providerError, setCookie: clear });
  }
  const identity = identityOfClaims(claims, {
    allowedDomains: sso.config.SSO_ALLOWED_DOMAINS,
    roleClaim: sso.config.SSO_ROLE_CLAIM,
    roleMap: sso.config.SSO_ROLE_MAP,
  });
  if ('refusal' in identity) {
    sso.log.warn({ failure: identity.refusal, sub: claims.sub }, 'sso sign-in refused');
    return ssoFailurePage(identity.refusal, { setCookie: clear });
  }
  // A GET is not a write to the api pipeline's audit step: the user's provisioning or role change is logged as
  // this sign-in's, naming the identity the provider vouched for.
  const actor = {
    type: 'public' as const,
    address: ctx.clientAddress,
    request_id: ctx.requestId,
    operation: OPERATION,
    name: `sso ${identity.email}`,
  };
  const result = await withAuditActor(actor, () => signInWithSso(sso.pg, identity));
  if ('refusal' in result) {
    sso.log.warn({ failure: result.refusal, email: identity.email }, 'sso sign-in refused');
    return ssoFailurePage(result.refusal, { setCookie: clear });
  }
  await sso.revocations.publish(result.revoked);
  sso.log.info(
    {
      user_id: result.user.id,
      provisioned: result.provisioned,
      role: identity.role,
      previous_role: result.previousRole,
    },
    'sso sign-in',
  );
  const session = await sso.sessions.signIn(result.user, sso.sessions.cookie(ctx.headers.cookie));
  // The transaction cookie is left to expire (one Set-Cookie per reply): replaying this callback with it reaches
  // the provider, which refuses the used code (sso_code_rejected).
  return {
    status: 303,
    headers: {
      Location: transaction.returnTo,
      'Set-Cookie': session.setCookie,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
    },
  };
}
