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

// The condition in SQL is scope-sql.ts; exported here too, so a billing file takes its scope from one place.
export { inScope } from './scope-sql.js';
