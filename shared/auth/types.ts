import { InsufficientScopeError } from '../errors.js';
import type { OperatorRole } from './roles.js';

export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** Who is calling: derived from a verified access token, never from the database on the hot path. */
export interface Principal {
  accountId: string;
  userId: string;
  clientId: string;
  /** The scopes as granted (not expanded). */
  scopes: readonly Scope[];
  tokenId: string;
  /** Unix seconds. */
  expiresAt: number;
  /**
   * The operator role of the token's user when it was issued (docs/roles.md); absent for a customer's people and
   * for tokens issued before roles existed (their users became owners). A role change revokes the user's tokens.
   */
  role?: OperatorRole;
}

/** Verifies an `Authorization` header; throws UnauthorizedError (401) when it is missing or invalid. */
export interface Authenticator {
  authenticate(authorizationHeader: string | undefined): Principal | Promise<Principal>;
  /**
   * The account of a token this process verified before and that is still valid, checking nothing new (a cache
   * look-up); undefined otherwise, also when its revocation cannot be confirmed. Never throws: the server calls
   * it as a request arrives, outside the pipeline. Lets the server charge a body to its account from the first byte.
   */
  verifiedAccount?(authorizationHeader: string | undefined): string | undefined;
  /** Whether what it relies on is current (the revocation list's watch); part of /readyz. */
  health?(): { ok: boolean; detail?: string };
}

const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

export function isScope(s: string): s is Scope {
  return s === 'read' || s === 'write' || s === 'admin';
}

/** Scopes nest: admin ⊇ write ⊇ read. True when any of `held` covers `needed`. */
export function scopesCover(held: readonly Scope[], needed: Scope): boolean {
  const need = RANK[needed];
  for (const s of held) if (RANK[s] >= need) return true;
  return false;
}

export function hasScope(principal: Principal, needed: Scope): boolean {
  return scopesCover(principal.scopes, needed);
}

/** The one scope check of every protected route: 403 insufficient_scope names what was needed. */
export function requireScope(principal: Principal, needed: Scope): void {
  if (!hasScope(principal, needed)) throw new InsufficientScopeError(needed);
}

/**
 * Parses an RFC 6749 §3.3 scope string (space-delimited, case-sensitive). Returns the known scopes
 * in canonical order without duplicates, or the first unknown token.
 */
export function parseScopeParam(raw: string): { scopes: Scope[] } | { unknown: string } {
  const seen = new Set<Scope>();
  for (const token of raw.split(' ')) {
    if (token === '') continue;
    if (!isScope(token)) return { unknown: token };
    seen.add(token);
  }
  return { scopes: SCOPES.filter((s) => seen.has(s)) };
}

export function formatScopes(scopes: readonly Scope[]): string {
  return SCOPES.filter((s) => scopes.includes(s)).join(' ');
}

/**
 * What a user may delegate of what a client asked for (docs/design.md §6): only operators grant `admin`.
 * For anyone else `admin` is left out; when nothing would remain, the next strongest scope
 * (`write`) stands in, so the token response's `scope` tells the client what it really got.
 */
export function grantableScopes(
  requested: readonly Scope[],
  isOperator: boolean,
): { granted: Scope[]; withheld: Scope[] } {
  if (isOperator || !requested.includes('admin')) return { granted: [...requested], withheld: [] };
  const rest = requested.filter((s) => s !== 'admin');
  return { granted: rest.length ? rest : ['write'], withheld: ['admin'] };
}
