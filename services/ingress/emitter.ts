import { hasScope, type Principal } from '../../shared/auth/types.js';
import { Attribution } from '../../shared/customers/attribution.js';
import { isPromise } from '../../shared/http/pipeline.js';
import type { RateTake } from '../../shared/limits/protection.js';
import type { RecordContext } from './records.js';
import type { IngressDeps } from './deps.js';

/**
 * How one ingest request (every path) counts against rates, before any meter lookup, so that a caller over its
 * rate costs nothing more (429, nothing published):
 * - a customer's token (read/write): the request's records against its account's ingest rate, as always;
 * - an admin token (an operator's emitter, whose records may be any customer's): the request's records against
 *   the emitter's own ceiling (`attributed_records_per_second`); then each account its valid records are for
 *   takes their count from its own ingest rate (takeCustomerRates, afterCustomerRate) — one noisy customer is
 *   refused, not the emitter's other customers.
 */
export function takeRequestRecords(deps: IngressDeps, principal: Principal, records: number): RateTake {
  return hasScope(principal, 'admin')
    ? deps.protection.takeAttributedRecords(principal.accountId, records)
    : deps.protection.takeIngestRecords(principal.accountId, records);
}

/** The record context of one ingest request, once its rate is taken: who emits, whose rates its records take. */
export function recordContext(deps: IngressDeps, principal: Principal): RecordContext {
  const accountId = principal.accountId;
  const operator = hasScope(principal, 'admin');
  const attribution = new Attribution({ accountId, operator }, deps.customers);
  const rc: RecordContext = { accountId, now: Date.now(), attribution };
  if (operator) {
    rc.takeRecords = (account, records) => deps.protection.takeIngestRecords(account, records);
    rc.takeRecordsEach = (records, slots) => deps.protection.takeIngestRecordsEach(records, slots);
  }
  return rc;
}

/**
 * One record of an admin emitter (single-record paths): its account's ingest rate takes 1 before `then`
 * publishes it; over the rate → RateLimitedError (429), nothing published.
 */
export function afterCustomerRate<T>(ctx: RecordContext, account: string, then: () => T | Promise<T>): T | Promise<T> {
  if (!ctx.takeRecords) return then();
  const taken = ctx.takeRecords(account, 1);
  return isPromise(taken) ? taken.then(then) : then();
}
