import { problemFromResponse } from './problem.js';
import type { TokenResponse } from './tokens.js';

/** What the api puts in the page's <meta name="meterline-console"> (services/console/module.ts). */
export interface ConsoleSettings {
  client_id: string;
  redirect_uri: string;
  issuer: string;
}

/** The scopes the console asks for; the consent page leaves out admin for users who are not operators. */
export const CONSOLE_SCOPE = 'read write admin';

/** What must survive the round trip through the authorization server (kept in sessionStorage, never tokens). */
export interface PendingSignIn {
  state: string;
  verifier: string;
  /** The console route to return to, e.g. "#/invoices". */
  returnTo: string;
}

const base64url = (bytes: Uint8Array): string => {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '') /* '=' is only ever padding */;
};

function randomToken(bytes = 32): string {
  return base64url(globalThis.crypto.getRandomValues(new Uint8Array(bytes)));
}

/** RFC 7636 S256: BASE64URL(SHA-256(ASCII(verifier))). */
export async function s256(verifier: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return base64url(new Uint8Array(digest));
}

/** A fresh state and PKCE verifier, and the authorization URL that carries them. */
export async function beginSignIn(
  settings: ConsoleSettings,
  authorizeEndpoint: string,
  returnTo: string,
): Promise<{ url: string; pending: PendingSignIn }> {
  const pending: PendingSignIn = { state: randomToken(16), verifier: randomToken(48), returnTo };
  const url = new URL(authorizeEndpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: settings.client_id,
    redirect_uri: settings.redirect_uri,
    scope: CONSOLE_SCOPE,
    state: pending.state,
    code_challenge: await s256(pending.verifier),
    code_challenge_method: 'S256',
  }).toString();
  return { url: url.toString(), pending };
}

export type CallbackResult = { kind: 'none' } | { kind: 'code'; code: string } | { kind: 'error'; message: string };

/**
 * Reads the authorization response from the page's query string (RFC 6749 §4.1.2, RFC 9207 `iss`). A state
 * that does not match the pending sign-in, or a response from another issuer, is refused (CSRF, mix-up).
 */
export function readCallback(search: string, pending: PendingSignIn | undefined, issuer: string): CallbackResult {
  const q = new URLSearchParams(search);
  if (!q.has('code') && !q.has('error')) return { kind: 'none' };
  if (!pending || q.get('state') !== pending.state)
    return {
      kind: 'error',
      message: 'The sign-in response does not belong to this browser tab (state mismatch). Sign in again.',
    };
  if (q.get('iss') !== issuer)
    return {
      kind: 'error',
      message: `The sign-in response came from ${q.get('iss') ?? 'an unnamed issuer'}, not ${issuer}.`,
    };
  const error = q.get('error');
  if (error) {
    const description = q.get('error_description');
    return {
      kind: 'error',
      message:
        error === 'access_denied'
          ? 'Access was denied on the consent page.'
          : `Sign-in failed: ${description ?? error}.`,
    };
  }
  return { kind: 'code', code: q.get('code')! };
}

/** Redeems the code at the token endpoint as a public client: client_id and the PKCE verifier, no secret. */
export async function exchangeCode(
  tokenEndpoint: string,
  settings: ConsoleSettings,
  code: string,
  verifier: string,
  fetcher: typeof fetch = fetch,
): Promise<TokenResponse> {
  const res = await fetcher(tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: settings.redirect_uri,
      client_id: settings.client_id,
      code_verifier: verifier,
    }).toString(),
  });
  if (!res.ok) throw await problemFromResponse(res);
  return (await res.json()) as TokenResponse;
}
