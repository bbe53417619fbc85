import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Principal } from '../../../shared/auth/types.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { UpcomingInvoiceQuery } from '../../../shared/api/invoices.js';
import { accountActedFor, accountActingOn } from '../../domain/customers/acting-for.js';
import { activeSubscriptionIds } from '../../domain/subscriptions/store.js';

/**
 * Which subscription's upcoming invoice a request asks for, and in which account (the actor's scope): named by
 * `subscription_id` (an operator's: any customer's), or — by `customer_id` alone — that customer's one active
 * subscription. Both: the subscription must be that customer's (else 404, as for any other account's).
 */
export async function upcomingOf(
  pg: PgPool,
  principal: Principal,
  q: UpcomingInvoiceQuery,
): Promise<{ accountId: string; subscriptionId: string }> {
  if (q.customer_id === undefined) {
    if (q.subscription_id === undefined)
      throw new ValidationError([{ field: 'subscription_id', message: 'give subscription_id or customer_id' }]);
    const accountId = await accountActingOn(pg, principal, 'subscription', q.subscription_id);
    return { accountId, subscriptionId: q.subscription_id };
  }
  const accountId = await accountActedFor(pg, principal, q.customer_id);
  if (q.subscription_id !== undefined) return { accountId, subscriptionId: q.subscription_id };
  const active = await activeSubscriptionIds(pg, accountId, 2);
  if (active.length === 0) throw new NotFoundError(`Customer ${q.customer_id} has no active subscription.`);
  if (active.length > 1)
    throw new ValidationError([
      { field: 'subscription_id', message: 'the customer has several active subscriptions: name one' },
    ]);
  return { accountId, subscriptionId: active[0]! };
}
