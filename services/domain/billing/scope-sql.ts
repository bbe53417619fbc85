/**
 * The billing scope as SQL (scope.ts says whose billing a run covers): the condition every store of the billing
 * engine adds to select the scope's accounts only.
 */

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
