import { InsufficientScopeError } from '../errors.js';

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
}

/** Verifies an `Authorization` header; throws UnauthorizedError (401) when it is missing or invalid. */
export interface Authenticator {
  authenticate(authorizationHeader: string | undefined): Principal | Promise<Principal>;
}

const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

/** Scopes nest: admin ⊇ write ⊇ read. */
export function hasScope(principal: Principal, needed: Scope): boolean {
  const need = RANK[needed];
  for (const s of principal.scopes) if (RANK[s] >= need) return true;
  return false;
}

export function requireScope(principal: Principal, needed: Scope): void {
  if (!hasScope(principal, needed)) throw new InsufficientScopeError(needed);
}
