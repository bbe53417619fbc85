import type { HttpReply } from '../../../shared/http/context.js';
import type { IdentityRefusal } from '../../domain/sso/identity.js';
import type { SignInRefusal } from '../../domain/sso/sign-in.js';
import { escapeHtml, page } from '../oauth/templates.js';
import type { RedeemFailure } from './relying-party.js';

export type SsoFailure = RedeemFailure | IdentityRefusal | SignInRefusal | 'sso_off';

/** One page per reason a single sign-on ends without a session: status, title, what to do (docs/sso.md). */
const FAILURES: Record<SsoFailure, { status: number; title: string; message: string }> = {
  sso_off: { status: 404, title: 'Single sign-on is off', message: 'This meterline has no SSO_ISSUER configured.' },
  provider_unreachable: {
    status: 502,
    title: 'Identity provider unreachable',
    message: 'meterline could not reach the identity provider. Try again in a moment.',
  },
  state_mismatch: {
    status: 400,
    title: 'Sign-in not started here',
    message:
      'This answer from the identity provider does not belong to a sign-in this browser started (state mismatch, or it took longer than 10 minutes). Start the sign-in again.',
  },
  code_rejected: {
    status: 400,
    title: 'Sign-in code already used',
    message:
      'The identity provider refused this sign-in code: it was already used (a replayed or reloaded link) or has expired. Start the sign-in again.',
  },
  wrong_audience: {
    status: 400,
    title: 'Token for another application',
    message: 'The identity provider issued this ID token to another application (wrong audience). Sign-in refused.',
  },
  wrong_issuer: {
    status: 400,
    title: 'Token from another issuer',
    message: 'The ID token was not issued by the configured identity provider. Sign-in refused.',
  },
  nonce_mismatch: {
    status: 400,
    title: 'Token of another sign-in',
    message: 'The ID token belongs to another sign-in attempt (nonce mismatch). Start the sign-in again.',
  },
  id_token_invalid: {
    status: 400,
    title: 'Invalid ID token',
    message: 'The ID token failed validation (signature, expiry or form). Sign-in refused.',
  },
  provider_error: {
    status: 400,
    title: 'The identity provider refused',
    message: 'The identity provider ended the sign-in with an error.',
  },
  email_missing: {
    status: 403,
    title: 'No email address',
    message: 'The identity provider did not say which email address you sign in with.',
  },
  email_unverified: {
    status: 403,
    title: 'Email address not verified',
    message: 'The identity provider has not verified your email address. Verify it there, then sign in again.',
  },
  domain_not_allowed: {
    status: 403,
    title: 'Domain not allowed',
    message: 'Your email address is not of a domain allowed to sign in here with single sign-on.',
  },
  not_operator: {
    status: 403,
    title: 'Not an operator',
    message: 'This email address belongs to a customer’s sign-in; single sign-on is for the operator’s staff only.',
  },
  no_operator_account: {
    status: 409,
    title: 'No operator account yet',
    message: 'There is no operator account to join yet: create one with `meterline accounts create --operator`.',
  },
  last_owner: {
    status: 409,
    title: 'Last owner',
    message:
      'Your role at the identity provider would take the owner role from the account’s last owner. Ask an owner to name another owner first.',
  },
};

/** The error page of `failure`; its code is in the page and the `Meterline-Error` header. */
export function ssoFailurePage(failure: SsoFailure, o: { detail?: string; setCookie?: string } = {}): HttpReply {
  const f = FAILURES[failure];
  const headers: Record<string, string> = { 'Meterline-Error': `sso_${failure}` };
  if (o.setCookie) headers['Set-Cookie'] = o.setCookie;
  const detail = o.detail ? `<p class="note">${escapeHtml(o.detail)}</p>\n` : '';
  return page(
    f.status,
    f.title,
    `<h1>${escapeHtml(f.title)}</h1>\n<p class="error" role="alert">${escapeHtml(f.message)}</p>\n${detail}<p class="note">Error code: <code>sso_${failure}</code>. <a href="/console">Back to the console</a></p>`,
    headers,
  );
}
