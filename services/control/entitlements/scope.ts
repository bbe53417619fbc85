import { hasScope, type Principal } from '../../../shared/auth/types.js';
import type { EntitlementScope } from '../../domain/entitlements/store.js';

/** Whose entitlements a token reads: an operator's (admin) every customer's of the deployment, anyone else its own. */
export function entitlementScope(principal: Principal): EntitlementScope {
  return hasScope(principal, 'admin') ? 'deployment' : { accountId: principal.accountId };
}
