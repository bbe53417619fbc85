import type { PgClient } from '../../../shared/clients/postgres.js';
import { TAX_PROFILE_COLUMNS } from '../tax/invoice-tax.js';
import type { TaxProfile } from '../tax/types.js';
import { isoDate } from './deductions.js';
import { inScope, type BillingScope } from './scope.js';

/** SQL of progressive billing (thresholds.ts): the subscriptions with a threshold, their threshold invoices' sequence. */

/** A running period of a subscription with a threshold, with its customer's tax profile. */
export interface ThresholdRow extends TaxProfile {
  id: string;
  account_id: string;
  customer_id: string;
  currency: string;
  billing_period_start: Date;
  billing_period_end: Date;
  threshold: string;
}

/**
 * Locks up to `limit` active subscriptions of the scope with a threshold whose period is running at `now`, in id
 * order after `after` (only the running period: once it has ended, its close bills the rest).
 */
export async function lockThresholdSubscriptions(
  client: PgClient,
  q: { now: Date; after: string; scope: BillingScope; limit: number },
): Promise<ThresholdRow[]> {
  const r = await client.query<ThresholdRow>(
    `SELECT s.id, s.account_id, a.customer_id, s.currency, s.billing_period_start, s.billing_period_end, s.billing_threshold::text AS threshold,
            ${TAX_PROFILE_COLUMNS('a')}
       FROM subscriptions s JOIN accounts a ON a.id = s.account_id
      WHERE s.billing_threshold IS NOT NULL AND s.status = 'active' AND s.billing_period_start <= $1 AND s.billing_period_end > $1
        AND s.id > $2 AND ${inScope('s.account_id', '$3')}
      ORDER BY s.id LIMIT $4 FOR UPDATE OF s SKIP LOCKED`,
    [q.now, q.after, q.scope.clockId, q.limit],
  );
  return r.rows;
}

/** Each subscription's next threshold_seq in the period starting at its `periodStart`: 1 + its threshold invoices there. */
export async function nextThresholdSeqs(
  client: PgClient,
  subs: { subscription_id: string; periodStart: Date }[],
): Promise<Map<string, number>> {
  const r = await client.query<{ subscription_id: string; seq: number }>(
    `SELECT c.subscription_id, COALESCE(max(i.threshold_seq), 0) + 1 AS seq
       FROM unnest($1::text[], $2::date[]) AS c(subscription_id, period_start)
       LEFT JOIN invoices i ON i.subscription_id = c.subscription_id AND i.period_start = c.period_start AND i.reason = 'threshold'
      GROUP BY c.subscription_id`,
    [subs.map((v) => v.subscription_id), subs.map((v) => isoDate(v.periodStart.getTime()))],
  );
  return new Map(r.rows.map((x) => [x.subscription_id, x.seq]));
}
