import type { OperatorRole } from '../../../shared/auth/roles.js';
import { emailDomain, type SsoRoleMap } from '../../../shared/config-sso.js';

/** Why a provider's otherwise valid id_token does not sign anyone in (docs/sso.md); each has its own page. */
export type IdentityRefusal = 'email_missing' | 'email_unverified' | 'domain_not_allowed';

export interface SsoIdentity {
  /** The verified email, as the provider wrote it (matched case-insensitively). */
  email: string;
  /** The provider's subject, for the log. */
  subject: string;
  role: OperatorRole;
}

/**
 * Who the id_token's claims name, if they may sign in: an email the provider says it verified (`email_verified`
 * exactly true — a string "true" or a missing claim is not), of an allowed domain; the role from the role claim.
 */
export function identityOfClaims(
  claims: Record<string, unknown>,
  rules: { allowedDomains: readonly string[]; roleClaim: string; roleMap: SsoRoleMap },
): SsoIdentity | { refusal: IdentityRefusal } {
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) return { refusal: 'email_missing' };
  if (claims.email_verified !== true) return { refusal: 'email_unverified' };
  if (!rules.allowedDomains.includes(emailDomain(email))) return { refusal: 'domain_not_allowed' };
  return { email, subject: String(claims.sub), role: roleOfClaim(rules.roleMap, claims[rules.roleClaim]) };
}

/** The role of the first map entry whose value the claim carries (a string or an array of strings), else the default. */
export function roleOfClaim(map: SsoRoleMap, claim: unknown): OperatorRole {
  const values = new Set((Array.isArray(claim) ? claim : [claim]).filter((v): v is string => typeof v === 'string'));
  return map.entries.find((e) => values.has(e.value))?.role ?? map.defaultRole;
}
