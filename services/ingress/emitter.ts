import { hasScope, type Principal } from '../../shared/auth/types.js';
import { Attribution } from '../../shared/customers/attribution.js';
import type { RecordContext } from './records.js';
import type { IngressDeps } from './deps.js';

/**
 * The record context of one ingest request (every path): who emits, and how its records count against rates.
 * Before any meter lookup, so a caller over its rate costs nothing more (429, nothing published):
 * - a customer's token (read/write): the request's records against its account's ingest rate, as always;
 * - an admin token (an operator's emitter, whose records may be any customer's): the request's records against
 *   the emitter's own ceiling (`attributed_records_per_second`), then each valid record against the ingest rate
 *   of the account it is for — one noisy customer is refused, not the emitter's other customers.
 */
export function recordContext(deps: IngressDeps, principal: Principal, records: number): RecordContext {
  const accountId = principal.accountId;
  const operator = hasScope(principal, 'admin');
  const now = Date.now();
  const attribution = new Attribution({ accountId, operator }, deps.customers);
  if (!operator) {
    deps.protection.takeIngestRecords(accountId, records);
    return { accountId, now, attribution };
  }
  deps.protection.takeAttributedRecords(accountId, records);
  const at = performance.now();
  return {
    accountId,
    now,
    attribution,
    takeRecord: (account) => deps.protection.takeIngestRecords(account, 1, at),
  };
}
