import { withTransaction, type PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { CustomerRegistryWriter } from '../customers/registry-writer.js';
import { insertCustomer } from '../customers/store.js';
import { findCheckoutSession, setCheckoutAccount } from './store.js';
import { checkoutExpired } from './complete.js';
import { checkoutStatus } from './types.js';

/**
 * The account a checkout charges: the customer the session names, or — for a session made with customer_email — the
 * customer created from that email the first time the page sets up a card. Under the session row's lock: two tabs
 * setting up cards at once make one customer. Refuses an expired session; a completed one keeps its customer.
 */
export async function checkoutAccount(
  pg: PgPool,
  registry: CustomerRegistryWriter,
  sessionId: string,
  now: Date,
): Promise<string> {
  return withTransaction(pg, async (client) => {
    const s = await findCheckoutSession(client, sessionId, { lock: true });
    if (!s) throw new NotFoundError('This checkout does not exist.');
    if (checkoutStatus(s, now) === 'expired') throw checkoutExpired(s);
    if (s.account_id) return s.account_id;
    const email = s.customer_email!;
    const customer = await insertCustomer(pg, registry, {
      name: email,
      externalId: null,
      email,
      billingAddress: null,
      metadata: { checkout_session_id: s.id },
      legal: {},
    });
    await setCheckoutAccount(client, s.id, customer.account_id);
    return customer.account_id;
  });
}
