import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { BillingAnchor, BillingInterval } from '../../../shared/vocabulary.js';
import { TAX_PROFILE_COLUMNS } from '../tax/invoice-tax.js';
import type { TaxProfile } from '../tax/types.js';
import { inScope, type BillingScope } from './scope.js';

/** SQL of the advance invoices (advance.ts): the subscriptions whose period longer than a month began. */

/** A subscription an advance invoice is due for, with its customer's tax profile and terms. */
export interface AdvanceRow extends TaxProfile {
  id: string;
  account_id: string;
  customer_id: string;
  currency: string;
  created_at: Date;
  canceled_at: Date | null;
  trial_end: Date | null;
  interval: BillingInterval;
  interval_count: number;
  billing_anchor: BillingAnchor;
  advance_period_start: Date;
  advance_period_end: Date;
  net_terms_days: number;
}

/** Due: the period has begun (and the trial ended); a canceled subscription gets none for periods after it. */
const ADVANCE_DUE = `s.advance_period_start <= $1 AND (s.trial_end IS NULL OR s.trial_end <= $1)
  AND (s.status = 'active' OR s.advance_period_start < s.canceled_at)`;

/** Locks up to `limit` subscriptions of the scope with an advance invoice due at `now`, oldest period first. */
export async function lockAdvanceDue(
  client: PgClient,
  now: Date,
  scope: BillingScope,
  limit: number,
): Promise<AdvanceRow[]> {
  const r = await client.query<AdvanceRow>(
    `SELECT s.id, s.account_id, a.customer_id, s.currency, s.created_at, s.canceled_at, s.trial_end, s."interval",
            s.interval_count, s.billing_anchor, s.advance_period_start, s.advance_period_end, ${TAX_PROFILE_COLUMNS('a')}
       FROM subscriptions s JOIN accounts a ON a.id = s.account_id
      WHERE ${ADVANCE_DUE} AND ${inScope('s.account_id', '$2')}
      ORDER BY s.advance_period_start, s.account_id, s.id LIMIT $3 FOR UPDATE OF s SKIP LOCKED`,
    [now, scope.clockId, limit],
  );
  return r.rows;
}

/** The first instant an advance invoice falls due in the scope, or null. */
export async function firstAdvanceDue(pg: Pick<PgPool, 'query'>, scope: BillingScope): Promise<Date | null> {
  const r = await pg.query<{ at: Date | null }>(
    `SELECT min(GREATEST(s.advance_period_start, s.trial_end)) AS at FROM subscriptions s
      WHERE s.advance_period_start IS NOT NULL AND (s.status = 'active' OR s.advance_period_start < s.canceled_at)
        AND ${inScope('s.account_id', '$1')}`,
    [scope.clockId],
  );
  return r.rows[0]?.at ?? null;
}
