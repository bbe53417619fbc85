/**
 * Operator roles (docs/roles.md): a user of the operator's account has one; a token it holds may do what its
 * scopes allow AND what its role allows. The role travels in the access token (`role` claim), so the check costs
 * no database read; changing a user's role revokes the user's tokens (services/domain/accounts/roles.ts).
 */
export const OPERATOR_ROLES = ['owner', 'admin', 'billing', 'support', 'developer'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export function isOperatorRole(s: unknown): s is OperatorRole {
  return typeof s === 'string' && (OPERATOR_ROLES as readonly string[]).includes(s);
}

/**
 * What a route touches, for the role check. Every route has one (services/roles/api/route-areas.ts, one table).
 * - `catalog`: products, plans, coupons, tax rates — prices.
 * - `billing`: subscriptions, invoices, credit notes, credits, payment methods, billing details, test clocks.
 * - `customers`: the deployment's customers (accounts) themselves.
 * - `metering`: meters, usage (ingest, queries, corrections), entitlements, alerts.
 * - `webhooks`: webhooks and their deliveries.
 * - `clients`: API (OAuth) clients and their keys.
 * - `users`: the operator's users and their roles, customers' sign-ins.
 * - `settings`: deployment settings (portal settings, seller and branding).
 * - `audit`: the audit log.
 */
export const PERMISSION_AREAS = [
  'catalog',
  'billing',
  'customers',
  'metering',
  'webhooks',
  'clients',
  'users',
  'settings',
  'audit',
] as const;
export type PermissionArea = (typeof PERMISSION_AREAS)[number];

interface RolePolicy {
  /** Areas the role may read (GET). */
  read: readonly PermissionArea[];
  /** Areas the role may change (any other method). */
  write: readonly PermissionArea[];
}

const EVERYTHING = PERMISSION_AREAS;

/**
 * The one table of what each role may do. support writes nothing: meterline has no notes resource, so
 * "write nothing but notes" is read-only. developer sees no money: no billing documents, no prices.
 */
export const ROLE_POLICIES: Readonly<Record<OperatorRole, RolePolicy>> = {
  owner: { read: EVERYTHING, write: EVERYTHING },
  admin: { read: EVERYTHING, write: EVERYTHING },
  billing: { read: EVERYTHING, write: ['catalog', 'billing', 'customers'] },
  support: { read: EVERYTHING, write: [] },
  developer: {
    read: ['customers', 'metering', 'webhooks', 'clients', 'users', 'settings', 'audit'],
    write: ['metering', 'webhooks', 'clients'],
  },
};

/** Whether `role` may do `access` on `area`; `null` (a customer's user, not an operator) is bounded by scopes only. */
export function roleAllows(role: OperatorRole | null, area: PermissionArea, access: 'read' | 'write'): boolean {
  if (role === null) return true;
  return ROLE_POLICIES[role][access].includes(area);
}

/** Reads are GET (and HEAD); everything else changes something. */
export function accessOfMethod(method: string): 'read' | 'write' {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}
