import type { PgPool } from '../../../shared/clients/postgres.js';
import { CUSTOMER_KEY } from '../../../shared/customers/attribution.js';
import { ACCOUNT_GROUP } from './read-sql.js';
import { accountsOfExternalIds, externalIdsOf } from '../customers/store.js';

/** What of a usage read the customer rule looks at and rewrites: its dimension filters and groups. */
export interface SlicedRead {
  /** Dimension keys to group by, in the order asked. */
  groupBy: string[];
  /** Dimension key → accepted values. */
  filters: Map<string, string[]>;
}

/**
 * Whose usage a token may read of a deployment meter (operator mode, docs/design.md §6). Its usage is kept per
 * customer account:
 * - an operator's token (admin) reads every customer, `filter[customer]=<external_id>` narrows to those;
 * - any other token reads its own account only, whatever it filters on (another customer's id reads nothing);
 * - `group_by=customer` groups by account, answered as each customer's external id.
 */
export interface CustomerSlice<R extends SlicedRead> {
  /** The read with `customer` taken out of its filters and turned into the account group. */
  read: R;
  accounts: 'all' | string[];
}

export async function customerSlice<R extends SlicedRead>(
  pg: PgPool,
  accountId: string,
  asOperator: boolean,
  read: R,
): Promise<CustomerSlice<R>> {
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
