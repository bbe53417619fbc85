import type { PgPool } from '../../../shared/clients/postgres.js';
import { CUSTOMER_KEY } from '../../../shared/customers/attribution.js';
import { ACCOUNT_GROUP } from '../../../shared/usage/read-sql.js';
import { accountsOfExternalIds, externalIdsOf } from '../../domain/customers/store.js';
import type { UsageRead } from './input.js';

/**
 * A read of a deployment meter (operator mode, docs/design.md §6). Its usage is kept per customer account:
 * - an operator's token (admin) reads every customer, `filter[customer]=<external_id>` narrows to those;
 * - any other token reads its own account only, whatever it filters on (another customer's id reads nothing);
 * - `group_by=customer` groups by account, answered as each customer's external id.
 */
export interface CustomerSlice {
  /** The read with `customer` taken out of its filters and turned into the account group. */
  read: UsageRead;
  accounts: 'all' | string[];
}

export async function customerSlice(
  pg: PgPool,
  accountId: string,
  asOperator: boolean,
  read: UsageRead,
): Promise<CustomerSlice> {
  const filters = new Map(read.filters);
  const wanted = filters.get(CUSTOMER_KEY);
  filters.delete(CUSTOMER_KEY);
  let accounts: 'all' | string[] = asOperator ? 'all' : [accountId];
  if (wanted) {
    const named = await accountsOfExternalIds(pg, wanted);
    accounts = asOperator ? named : named.filter((a) => a === accountId);
  }
  const groupBy = read.groupBy.map((k) => (k === CUSTOMER_KEY ? ACCOUNT_GROUP : k));
  return { read: { ...read, filters, groupBy }, accounts };
}

/** How each group's account is shown under `customer`: its external id, else (no external id yet) its `cus_` id. */
export async function customerNames(pg: PgPool, accountIds: string[]): Promise<Map<string, string>> {
  const known = await externalIdsOf(pg, accountIds);
  return new Map([...known].map(([account, names]) => [account, names.external_id ?? names.customer_id]));
}
