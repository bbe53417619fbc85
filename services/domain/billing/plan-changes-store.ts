import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { PlanMigrationTiming } from '../../../shared/vocabulary.js';
import type { SubscriptionRow } from '../subscriptions/types.js';
import { inScope, type BillingScope } from './scope.js';

/** SQL of plan moves: scheduled changes due (plan-changes.ts) and a version's subscribers (plan-migration.ts). */

/** Locks up to `limit` subscriptions of the scope whose scheduled plan change is due by `now`, first due first. */
export async function lockDuePlanChanges(
  client: PgClient,
  now: Date,
  scope: BillingScope,
  limit: number,
): Promise<{ id: string; account_id: string }[]> {
  const { rows } = await client.query<{ id: string; account_id: string }>(
    `SELECT s.id, s.account_id FROM subscriptions s
      WHERE s.pending_plan_version IS NOT NULL AND s.pending_plan_at <= $1 AND ${inScope('s.account_id', '$2')}
      ORDER BY s.pending_plan_at, s.id LIMIT $3 FOR UPDATE SKIP LOCKED`,
    [now, scope.clockId, limit],
  );
  return rows;
}

/** A move of a plan version's subscribers to another version of the plan (docs/plans.md "Moving subscribers"). */
export interface PlanMigration {
  planId: string;
  from: number;
  to: number;
  at: PlanMigrationTiming;
}

/** What a migration reads of a subscription it moves. */
export type MigrationRow = Pick<
  SubscriptionRow,
  | 'id'
  | 'account_id'
  | 'status'
  | 'created_at'
  | 'canceled_at'
  | 'interval'
  | 'interval_count'
  | 'billing_anchor'
  | 'trial_end'
>;
const MIGRATION_COLUMNS =
  'id, account_id, status, created_at, canceled_at, "interval", interval_count, billing_anchor, trial_end';

/** The subscriptions a migration moves ($1 plan, $2 from_version, $3 to_version): active, on from_version, not yet scheduled. */
const ON_FROM_VERSION = `plan_id = $1 AND plan_version = $2 AND status = 'active'
  AND ($4 = 'now' OR pending_plan_version IS DISTINCT FROM $3)`;
const params = (m: PlanMigration) => [m.planId, m.from, m.to, m.at];

/**
 * Locks up to `limit` subscriptions the migration still moves, in id order; `wait`: waits for rows another
 * transaction holds instead of skipping them.
 */
export async function lockMigrationBatch(
  client: PgClient,
  m: PlanMigration,
  limit: number,
  wait: boolean,
): Promise<MigrationRow[]> {
  const { rows } = await client.query<MigrationRow>(
    `SELECT ${MIGRATION_COLUMNS} FROM subscriptions WHERE ${ON_FROM_VERSION}
      ORDER BY id LIMIT ${Number(limit)} FOR UPDATE${wait ? '' : ' SKIP LOCKED'}`,
    params(m),
  );
  return rows;
}

/** A page of the subscriptions the migration would move, in id order, and how many there are. */
export function migrationPage(
  pg: PgPool,
  m: PlanMigration,
  window: RowWindow,
): Promise<{ rows: MigrationRow[]; total: number }> {
  return selectPage<MigrationRow>(
    pg,
    { columns: MIGRATION_COLUMNS, from: 'subscriptions', where: ON_FROM_VERSION, params: params(m), orderBy: 'id' },
    window,
  );
}

/** Takes a subscription's row lock (a dry run's move holds it as the real move does). */
export async function lockSubscriptionRow(client: PgClient, id: string): Promise<void> {
  await client.query('SELECT 1 FROM subscriptions WHERE id = $1 FOR UPDATE', [id]);
}
