/**
 * Whose billing a run covers (docs/test-clocks.md). A run at real time — the billing role's tick, `meterline
 * billing run` — covers the customers on no test clock; a test clock's advance runs the same engine at the
 * clock's instants for that clock's customers only. So a clocked customer's periods close and its invoices are
 * charged only when its clock reaches their time, and never by a run at real time.
 */
export interface BillingScope {
  /** clock_… whose customers the run covers; null: the customers on no clock. */
  clockId: string | null;
}

export const LIVE_CUSTOMERS: BillingScope = { clockId: null };

/**
 * The SQL condition "the account in `accountColumn` is in the scope", with the clock id as parameter `param`
 * (always passed, null for the live customers). The live form is an anti-join on the partial index of
 * clocked accounts, so a deployment without clocks pays almost nothing for it.
 */
export function inScope(accountColumn: string, param: string): string {
  return `(CASE WHEN ${param}::text IS NULL
                THEN NOT EXISTS (SELECT 1 FROM accounts ck WHERE ck.id = ${accountColumn} AND ck.test_clock_id IS NOT NULL)
                ELSE EXISTS (SELECT 1 FROM accounts ck WHERE ck.id = ${accountColumn} AND ck.test_clock_id = ${param}::text) END)`;
}
