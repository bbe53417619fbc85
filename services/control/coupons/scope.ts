import { hasScope, type Principal } from '../../../shared/auth/types.js';
import { InsufficientScopeError } from '../../../shared/errors.js';

/** Applying or removing a coupon is the operator's (admin): a customer's own token gets 403 insufficient_scope. */
export function requireAdminForCoupon(principal: Principal): void {
  if (!hasScope(principal, 'admin')) throw new InsufficientScopeError('admin');
}
