import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { BillingAnchor, BillingInterval } from '../../../shared/vocabulary.js';
import { TAX_PROFILE_COLUMNS } from '../tax/invoice-tax.js';
import type { TaxProfile } from '../tax/types.js';
import { inScope, type BillingScope } from './scope.js';

/** SQL of the period close (close.ts): the subscriptions whose period ended. */

/** A subscription whose period is due, with its customer's tax profile and terms (tax/invoice-tax.ts). */
export interface DueRow extends TaxProfile {
  id: string;
  account_id: string;
  customer_id: string;
  currency: string;
  canceled_at: Date | null;
  collection_paused_at: Date | null;
  collection_resumed_at: Date | null;
  billing_period_start: Date;
  billing_period_end: Date;
  created_at: Date;
  trial_end: Date | null;
  interval: BillingInterval;
  interval_count: number;
  billing_anchor: BillingAnchor;
  net_terms_days: number;
}

const DUE = `billing_period_end <= $1 AND (status = 'active' OR billing_period_start < canceled_at)`;
/** With drafts: a subscription's next period closes only once its draft is finalized (periods in order). */
const NO_DRAFT = `NOT EXISTS (SELECT 1 FROM invoices d WHERE d.subscription_id = s.id AND d.status = 'draft')`;

/** Locks up to `limit` subscriptions of the scope whose period ended by `cutoff`, oldest period first. */
export async function lockDuePeriods(
  client: PgClient,
  q: { cutoff: Date; limit: number; scope: BillingScope; drafts: boolean },
): Promise<DueRow[]> {
  const r = await client.query<DueRow>(
    `SELECT s.id, s.account_id, a.customer_id, s.currency, s.canceled_at, s.collection_paused_at, s.collection_resumed_at, s.billing_period_start, s.billing_period_end,
            s.created_at, s.trial_end, s."interval", s.interval_count, s.billing_anchor, ${TAX_PROFILE_COLUMNS('a')}
       FROM subscriptions s JOIN accounts a ON a.id = s.account_id
      WHERE ${DUE} AND ${inScope('s.account_id', '$3')} AND ($4::boolean IS FALSE OR ${NO_DRAFT})
      ORDER BY s.billing_period_start, s.account_id, s.id LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
    [q.cutoff, q.limit, q.scope.clockId, q.drafts],
  );
  return r.rows;
}

/** Periods of the scope ended by `cutoff`: calendar months counted exactly, other periods as one each. */
export async function countPeriodsEndedBy(pg: PgPool, cutoff: Date, scope: BillingScope): Promise<number> {
  const idx = (t: string) =>
    `(extract(year FROM ${t} AT TIME ZONE 'UTC') * 12 + extract(month FROM ${t} AT TIME ZONE 'UTC'))`;
  const r = await pg.query<{ n: string | null }>(
    `SELECT sum(CASE WHEN "interval" <> 'month' OR interval_count <> 1 OR billing_anchor <> 'calendar' THEN 1
                     WHEN status = 'canceled' THEN LEAST(${idx('$3::timestamptz')}, ${idx("(canceled_at - interval '1 millisecond')")} + 1) - ${idx('billing_period_start')}
                     ELSE ${idx('$3::timestamptz')} - ${idx('billing_period_start')} END)::text AS n
       FROM subscriptions WHERE ${DUE} AND ${inScope('account_id', '$2')}`,
    [cutoff, scope.clockId, cutoff],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** The end of the scope's open period that ends first, or null when none is left to close. */
export async function firstOpenPeriodEnd(pg: Pick<PgPool, 'query'>, scope: BillingScope): Promise<Date | null> {
  const r = await pg.query<{ end: Date | null }>(
    `SELECT min(billing_period_end) AS end FROM subscriptions
      WHERE (status = 'active' OR billing_period_start < canceled_at) AND ${inScope('account_id', '$1')}`,
    [scope.clockId],
  );
  return r.rows[0]?.end ?? null;
}
