import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { hasScope, type Principal } from '../../../shared/auth/types.js';
import { InsufficientScopeError, ValidationError } from '../../../shared/errors.js';
import { findAccountOfCustomer } from './store.js';

/**
 * The account a request acts for (operator mode, docs/design.md §6): the caller's own, or — given a `customer_id`
 * (`?customer_id=` on a list, a body field on a create) — that customer's. Only an operator (admin) acts for
 * another customer; any other token may name only itself, and naming anyone else (an unknown id included) is
 * the same 403, so no token learns who exists. An admin naming no customer of the deployment → 422 on `field`.
 */
export async function accountActedFor(
  db: PgPool | PgClient,
  principal: Principal,
  customerId: string | undefined,
  field = 'customer_id',
): Promise<string> {
  if (customerId === undefined) return principal.accountId;
  const account = await findAccountOfCustomer(db, customerId);
  if (account === principal.accountId) return account;
  if (!hasScope(principal, 'admin')) throw new InsufficientScopeError('admin');
  if (!account) throw new ValidationError([{ field, message: 'no such customer' }]);
  return account;
}
