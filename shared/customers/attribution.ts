/**
 * Whose usage record this is (operator mode, docs/design.md §6): THE attribution rule, for every ingest path
 * (single, batch, POST /v1/usage, the stream, CloudEvents).
 *
 * - A record of an account meter is the emitter's; naming a customer there is an error.
 * - A record of a deployment meter sent with an admin token names its customer: `customer` (external id) or
 *   `customer_id` (`cus_…`) — exactly one; missing → error on `customer`, unknown → `unknown_customer`.
 * - A record of a deployment meter sent with any other token is the emitter's own; it may name its own customer,
 *   naming any other is refused with the same words as an unknown one (no way to probe who exists).
 * Customers are found in the in-memory registry (shared/customers/table.ts): one probe, no I/O.
 */
import type { FieldError } from '../errors.js';
import type { MeterRecord } from '../meters/record.js';
import type { CustomerTable } from './table.js';

/** On deployment meters, the read key (`group_by=customer`, `filter[customer]`) and the record field naming the customer. */
export const CUSTOMER_KEY = 'customer';
export const CUSTOMER_ID_KEY = 'customer_id';
/** Error code of a record naming a customer the deployment doesn't have (or, for a customer's token, another one). */
export const UNKNOWN_CUSTOMER = 'unknown_customer';

export const CUSTOMER_REQUIRED_MESSAGE =
  'is required: a record of a deployment meter sent with an admin token names its customer (customer or customer_id)';
export const UNKNOWN_CUSTOMER_MESSAGE = 'names no customer of this deployment';
export const NOT_OWN_CUSTOMER_MESSAGE = 'must be this token’s own customer';
export const ACCOUNT_METER_MESSAGE = 'only records of a deployment meter name a customer';
export const BOTH_NAMES_MESSAGE = 'give either customer or customer_id, not both';

/** Messages that make a record's problem `unknown_customer` (recordErrorCode). */
export const UNKNOWN_CUSTOMER_MESSAGES: ReadonlySet<string> = new Set([
  UNKNOWN_CUSTOMER_MESSAGE,
  NOT_OWN_CUSTOMER_MESSAGE,
]);

/** Who sends the records: the token's account, and whether it acts for the deployment (`admin` scope). */
export interface Emitter {
  accountId: string;
  operator: boolean;
}

/** The customer registry as attribution uses it: the table, and the staleness check made before its first use. */
export interface CustomerLookup {
  readonly table: CustomerTable;
  assertCurrent(): void;
}

/** The fields of a record that name its customer. */
export interface CustomerFields {
  customer?: unknown;
  customer_id?: unknown;
}

/**
 * One request's attribution: `accountOf` applies the rule to each record. The registry's currency is checked
 * once, at its first use (503 when it cannot be confirmed: a stale copy must not refuse a new customer).
 */
export class Attribution {
  private confirmed = false;
  /** Some record was found to be another account's than the emitter's: its rows go on the attributed subject. */
  forOthers = false;
  /**
   * The registry slot of the customer the last accountOf found (-1 when it looked none up): the key of that
   * customer's state beside the registry (its rate bucket, takeEach), cheaper than a map keyed by its account.
   */
  slot = -1;

  constructor(
    readonly emitter: Emitter,
    private readonly customers: CustomerLookup,
  ) {}

  /** The account the record is for, or undefined with the problem pushed into `errors`. */
  accountOf(r: CustomerFields, meter: MeterRecord, errors: FieldError[]): string | undefined {
    this.slot = -1;
    const byExternal = r.customer;
    const byId = r.customer_id;
    if (meter.scope !== 'deployment') {
      if (byExternal === undefined && byId === undefined) return this.emitter.accountId;
      errors.push({ field: byExternal !== undefined ? CUSTOMER_KEY : CUSTOMER_ID_KEY, message: ACCOUNT_METER_MESSAGE });
      return undefined;
    }
    if (byExternal === undefined && byId === undefined) {
      if (!this.emitter.operator) return this.emitter.accountId;
      errors.push({ field: CUSTOMER_KEY, message: CUSTOMER_REQUIRED_MESSAGE });
      return undefined;
    }
    if (byExternal !== undefined && byId !== undefined) {
      errors.push({ field: CUSTOMER_KEY, message: BOTH_NAMES_MESSAGE });
      return undefined;
    }
    // The schema made sure a given name is a string.
    const field = byExternal !== undefined ? CUSTOMER_KEY : CUSTOMER_ID_KEY;
    if (!this.confirmed) {
      this.customers.assertCurrent();
      this.confirmed = true;
    }
    const table = this.customers.table;
    const slot =
      byExternal !== undefined ? table.slotOfExternalId(byExternal as string) : table.slotOfCustomerId(byId as string);
    const account = slot === undefined ? undefined : table.accountAt(slot);
    if (slot !== undefined) this.slot = slot;
    if (this.emitter.operator) {
      if (account === undefined) errors.push({ field, message: UNKNOWN_CUSTOMER_MESSAGE });
      else if (account !== this.emitter.accountId) this.forOthers = true;
      return account;
    }
    if (account !== this.emitter.accountId) {
      errors.push({ field, message: NOT_OWN_CUSTOMER_MESSAGE });
      return undefined;
    }
    return account;
  }
}
