import type { PgPool } from '../../shared/clients/postgres.js';
import { redirectUriProblem } from '../domain/accounts/clients.js';
import { ensurePublicClientRedirect } from '../domain/accounts/clients-store.js';
import { stripTrailing } from '../../shared/strings.js';

/** The console's OAuth client id: fixed, so the SPA needs no per-deployment value beyond its redirect URI. */
export const CONSOLE_CLIENT_ID = 'cli_console';
export const CONSOLE_CLIENT_NAME = 'meterline console';

/** Where the authorization server sends the browser back: the console page itself. */
export function consoleRedirectUri(publicBaseUrl: string): string {
  return `${stripTrailing(publicBaseUrl, '/')}/console`;
}

/**
 * Registers the console as a public OAuth client (PKCE S256, no secret), idempotently: every api process
 * runs it at start. A redirect URI is added, never replaced, so processes behind different public URLs
 * (or a changed PUBLIC_BASE_URL) all keep working. Returns why the console cannot sign in, or null.
 */
export async function registerConsoleClient(pg: PgPool, publicBaseUrl: string): Promise<string | null> {
  const redirectUri = consoleRedirectUri(publicBaseUrl);
  const problem = redirectUriProblem(redirectUri);
  if (problem) return `PUBLIC_BASE_URL gives the console the redirect URI ${redirectUri}, which ${problem}`;
  await ensurePublicClientRedirect(pg, CONSOLE_CLIENT_ID, CONSOLE_CLIENT_NAME, redirectUri);
  return null;
}
