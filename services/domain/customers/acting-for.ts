import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { hasScope, type Principal } from '../../../shared/auth/types.js';
import { InsufficientScopeError, ValidationError } from '../../../shared/errors.js';
import { findAccountOfCustomer } from './store.js';
import { ownerAccountOf, type OwnedKind } from './owners-store.js';

/**
 * The actor's scope (operator mode, docs/design.md §6), the one rule every route applies: an operator (admin)
 * acts for the deployment — any customer's account; any other token only ever for its own account.
 */

/**
 * The account a request naming a customer acts for: the caller's own, or — given a `customer_id` (`?customer_id=`
 * on a list, a body field on a create) — that customer's. Only an operator acts for another customer; any other
 * token may name only itself, and naming anyone else (an unknown id included) is the same 403, so no token learns
 * who exists. An admin naming no customer of the deployment → 422 on `field`.
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

/**
 * The accounts a list reads: `scope=deployment` — an operator's view of every customer at once (null: no account
 * filter; any other token → 403, whatever it names); else the one account accountActedFor gives. A `customer_id`
 * narrows a deployment-wide list to that customer.
 */
export async function accountsListedFor(
  db: PgPool | PgClient,
  principal: Principal,
  q: { customer_id?: string; scope?: 'deployment' },
): Promise<string | null> {
  if (q.scope === 'deployment') {
    if (!hasScope(principal, 'admin')) throw new InsufficientScopeError('admin');
    if (q.customer_id === undefined) return null;
  }
  return accountActedFor(db, principal, q.customer_id);
}

/**
 * The account a request on a resource named by its id acts in: an operator's, the account owning it (whichever
 * customer's); any other token's, its own. The route then reads or changes the resource in that account only, so
 * another account's id is 404 for a customer's token exactly like an unknown id, and an unknown id is 404 for all.
 */
export async function accountActingOn(
  db: PgPool | PgClient,
  principal: Principal,
  kind: OwnedKind,
  id: string,
): Promise<string> {
  if (!hasScope(principal, 'admin')) return principal.accountId;
  return (await ownerAccountOf(db, kind, id)) ?? principal.accountId;
}
