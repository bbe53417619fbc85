import type { RouteRegistry } from '../../../shared/http/route.js';
import type { HttpReply, RequestContext } from '../../../shared/http/context.js';
import { grantableScopes } from '../../../shared/auth/types.js';
import { RateLimitedError } from '../../../shared/errors.js';
import { verifyCredentials, type User } from '../../domain/accounts/users-store.js';
import type { OAuthContext } from './context.js';
import {
  authorizationResponse,
  checkAuthorizationRequest,
  type AuthorizationRequest,
} from './authorization-request.js';
import { createAuthorizationCode } from './grants.js';
import { consentPage, errorPage, signInPage } from './templates.js';
import type { Sessions } from './session.js';
import type { SignInThrottle } from './sign-in-throttle.js';
import { isSsoDomain, type SsoConfig } from '../../../shared/config-sso.js';

export interface AuthorizeDeps {
  oauth: OAuthContext;
  sessions: Sessions;
  throttle: Pick<SignInThrottle, 'admit' | 'recordSuccess'>;
  /** Single sign-on (docs/sso.md): the form links to it, and it may take password sign-in from its domains. */
  sso: SsoConfig;
}

/**
 * GET /oauth/authorize shows the sign-in form or the consent page; POST /oauth/authorize (the forms
 * post back to the same URL, so the authorization request rides along in the query string and is
 * validated again) signs in or records the decision.
 */
export function registerAuthorize(server: RouteRegistry, deps: AuthorizeDeps): void {
  server.route({
    method: 'GET',
    path: '/oauth/authorize',
    auth: 'public',
    handler: (ctx) => withRequest(deps, ctx, (request) => showPage(deps, ctx, request)),
    doc: {
      summary: 'Authorization endpoint (RFC 6749 §4.1.1): HTML sign-in and consent',
      tags: ['oauth'],
      responses: {
        '200': { description: 'HTML page', contentType: 'text/html' },
        '302': { description: 'Authorization error redirect' },
      },
    },
  });
  server.route({
    method: 'POST',
    path: '/oauth/authorize',
    auth: 'public',
    body: 'form-or-json',
    maxBodyBytes: 16 * 1024,
    handler: (ctx) =>
      withRequest(deps, ctx, (request) => {
        const form = formFields(ctx.body);
        if (form.decision !== undefined) return decide(deps, ctx, request, form);
        if (form.email !== undefined || form.password !== undefined) return signIn(deps, ctx, request, form);
        return Promise.resolve(errorPage(400, 'Invalid form', 'The form carried neither a sign-in nor a decision.'));
      }),
    doc: {
      summary: 'Sign-in and consent form submissions',
      tags: ['oauth'],
      responses: {
        '302': { description: 'Redirect to the client with code or error' },
        '303': { description: 'Signed in: back to the consent page' },
      },
    },
  });
}

type Form = Record<string, string | undefined>;

function formFields(body: unknown): Form {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return {};
  const out: Form = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}

async function withRequest(
  deps: AuthorizeDeps,
  ctx: RequestContext,
  fn: (r: AuthorizationRequest) => Promise<HttpReply>,
): Promise<HttpReply> {
  const check = await checkAuthorizationRequest(deps.oauth.pg, deps.oauth.issuer, ctx.query);
  if (check.kind === 'page') return errorPage(400, check.title, check.message);
  if (check.kind === 'redirect') return redirect(check.location);
  return fn(check.request);
}

const redirect = (location: string, status = 302, headers: Record<string, string> = {}): HttpReply => ({
  status,
  headers: { Location: location, 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', ...headers },
});

async function showPage(deps: AuthorizeDeps, ctx: RequestContext, request: AuthorizationRequest): Promise<HttpReply> {
  const cookie = deps.sessions.cookie(ctx.headers.cookie);
  const user = await deps.sessions.user(cookie);
  if (user) return consent(deps, cookie!, user, request);
  return signInForm(deps, ctx, cookie, request, {});
}

/** SSO's start, coming back to this same authorization request once signed in. */
const ssoStartUrl = (rawQuery: string): string =>
  `/console/sso/start?return_to=${encodeURIComponent(`/oauth/authorize?${rawQuery}`)}`;

/** The sign-in form, under a fresh anonymous cookie when the browser has none. */
function signInForm(
  deps: AuthorizeDeps,
  ctx: RequestContext,
  cookie: string | undefined,
  request: AuthorizationRequest,
  o: { status?: number; error?: string; email?: string; headers?: Record<string, string> },
): HttpReply {
  let headers = o.headers ?? {};
  if (!cookie) {
    const fresh = deps.sessions.anonymous();
    cookie = fresh.value;
    headers = { ...headers, 'Set-Cookie': fresh.setCookie };
  }
  return signInPage({
    status: o.status,
    clientName: request.client.name,
    csrfToken: deps.sessions.csrfToken(cookie, 'sign-in'),
    email: o.email,
    error: o.error,
    headers,
    ssoUrl: deps.sso.SSO_ISSUER ? ssoStartUrl(ctx.rawQuery) : undefined,
  });
}

function consent(
  deps: AuthorizeDeps,
  cookie: string,
  user: User,
  request: AuthorizationRequest,
  o: { status?: number; error?: string } = {},
): HttpReply {
  const { granted, withheld } = grantableScopes(request.scopes, user.isOperator);
  return consentPage({
    status: o.status,
    clientName: request.client.name,
    email: user.email,
    granted,
    withheld,
    csrfToken: deps.sessions.csrfToken(cookie, 'consent'),
    error: o.error,
  });
}

async function signIn(
  deps: AuthorizeDeps,
  ctx: RequestContext,
  request: AuthorizationRequest,
  form: Form,
): Promise<HttpReply> {
  const cookie = deps.sessions.cookie(ctx.headers.cookie);
  const email = (form.email ?? '').trim();
  if (!deps.sessions.csrfValid(cookie, 'sign-in', form.csrf_token)) {
    // No cookie or a forged/stale token: nothing is checked; a fresh form lets a real user go on.
    return signInForm(deps, ctx, undefined, request, {
      status: 403,
      email,
      error: 'This form expired or did not come from this site. Please sign in again.',
    });
  }
  if (!email || !form.password)
    return signInForm(deps, ctx, cookie, request, { status: 400, email, error: 'Enter your email and password.' });
  if (!deps.sso.SSO_PASSWORD_SIGNIN && isSsoDomain(deps.sso, email))
    return signInForm(deps, ctx, cookie, request, {
      status: 403,
      email,
      error: 'Your organisation signs in with single sign-on here, not with a password: use “Sign in with SSO”.',
    });
  const address = ctx.clientAddress;
  // Counted before the password is checked (a success takes it back): parallel guesses can't outrun the count.
  const wait = await deps.throttle.admit(address, email);
  if (wait > 0) return throttled(deps, ctx, cookie, request, email, wait);
  const user = await verifyCredentials(deps.oauth.pg, email, form.password);
  if (!user)
    return signInForm(deps, ctx, cookie, request, { status: 400, email, error: 'The email or password is incorrect.' });
  await deps.throttle.recordSuccess(address, email);
  const session = await deps.sessions.signIn(user, cookie);
  deps.oauth.log.info({ user_id: user.id, client_id: request.client.id }, 'oauth sign-in');
  // Post/Redirect/Get back to the same authorization request, which now shows the consent page.
  return redirect(`/oauth/authorize?${ctx.rawQuery}`, 303, { 'Set-Cookie': session.setCookie });
}

/** 429 + Retry-After: the sign-in form again for a browser, a problem document for a JSON client. */
function throttled(
  deps: AuthorizeDeps,
  ctx: RequestContext,
  cookie: string | undefined,
  request: AuthorizationRequest,
  email: string,
  wait: number,
): HttpReply {
  const detail = `Too many failed attempts. Try again in ${wait < 120 ? `${wait} seconds` : `${Math.ceil(wait / 60)} minutes`}.`;
  if (ctx.mediaType !== 'application/x-www-form-urlencoded')
    throw new RateLimitedError(detail, { 'Retry-After': String(wait) });
  return signInForm(deps, ctx, cookie, request, {
    status: 429,
    email,
    error: detail,
    headers: { 'Retry-After': String(wait) },
  });
}

async function decide(
  deps: AuthorizeDeps,
  ctx: RequestContext,
  request: AuthorizationRequest,
  form: Form,
): Promise<HttpReply> {
  const cookie = deps.sessions.cookie(ctx.headers.cookie);
  const user = await deps.sessions.user(cookie);
  if (!user)
    return signInForm(deps, ctx, cookie, request, { status: 403, error: 'Your session ended. Please sign in again.' });
  if (!deps.sessions.csrfValid(cookie, 'consent', form.csrf_token)) {
    return consent(deps, cookie!, user, request, {
      status: 403,
      error: 'This form expired or did not come from this site. Please decide again.',
    });
  }
  const issuer = deps.oauth.issuer;
  if (form.decision === 'deny') {
    deps.oauth.log.info({ user_id: user.id, client_id: request.client.id }, 'oauth consent denied');
    return redirect(
      authorizationResponse(request.redirectUri, issuer, {
        error: 'access_denied',
        error_description: 'The user denied the request.',
        state: request.state,
      }),
    );
  }
  if (form.decision !== 'approve')
    return consent(deps, cookie!, user, request, { status: 400, error: 'Choose Approve or Deny.' });
  const { granted } = grantableScopes(request.scopes, user.isOperator);
  const code = await createAuthorizationCode(deps.oauth, {
    client: request.client,
    user,
    redirectUri: request.redirectUri,
    redirectUriInRequest: request.redirectUriInRequest,
    scopes: granted,
    codeChallenge: request.codeChallenge,
  });
  deps.oauth.log.info(
    { user_id: user.id, client_id: request.client.id, scope: granted.join(' ') },
    'oauth consent approved',
  );
  return redirect(authorizationResponse(request.redirectUri, issuer, { code, state: request.state }));
}
