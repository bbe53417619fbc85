import type { PgClient } from '../../../shared/clients/postgres.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { ItemRequest } from '../subscriptions/types.js';
import { planItemsIn } from './price-books.js';
import { getPlanVersion } from './store.js';
import type { PlanVersionRow } from './types.js';

/**
 * A plan version's items as a subscription's item request in `currency` (default the plan's own), each amount the
 * items carry in that currency (price books: planItemsIn); checked again for the subscriber's account.
 */
export const itemsOfPlan = (version: PlanVersionRow, currency?: string): ItemRequest[] =>
  planItemsIn(version, currency ?? version.currency);

/**
 * The version a subscription is made from (`POST /v1/subscriptions {plan_id, plan_version?}`; default the latest).
 * An unknown plan or version is a bad reference in the body: 422 naming the field, as an unknown product is.
 */
export async function planVersionToSubscribe(
  client: PgClient,
  planId: string,
  version?: number,
): Promise<PlanVersionRow> {
  try {
    return await getPlanVersion(client, planId, version);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    const versionMissing = version !== undefined && err.message.includes('has no version');
    throw new ValidationError([
      versionMissing
        ? { field: 'plan_version', message: `plan ${planId} has no such version` }
        : { field: 'plan_id', message: 'no such plan' },
    ]);
  }
}
