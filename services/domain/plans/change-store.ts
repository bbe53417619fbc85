import type { PgClient } from '../../../shared/clients/postgres.js';

/** SQL of a subscription's plan change (plans/change.ts). */

/** The price of each flat product among `productIds` (usage-priced ones are left out): exact NUMERIC text. */
export async function flatPrices(client: PgClient, productIds: readonly string[]): Promise<Map<string, string>> {
  const r = await client.query<{ id: string; price: string }>(
    `SELECT id, price::text AS price FROM products WHERE id = ANY($1) AND pricing = 'flat'`,
    [productIds],
  );
  return new Map(r.rows.map((p) => [p.id, p.price]));
}

/**
 * Schedules the move to `planId`'s `version` at `at` (the billing run applies it: billing/plan-changes.ts); planId
 * null: a version of the subscription's own plan (a migration, billing/plan-migration.ts).
 */
export async function schedulePlanChange(
  client: PgClient,
  subscriptionId: string,
  planId: string | null,
  version: number,
  at: Date,
): Promise<void> {
  await client.query(
    'UPDATE subscriptions SET pending_plan_id = $2, pending_plan_version = $3, pending_plan_at = $4 WHERE id = $1',
    [subscriptionId, planId, version, at],
  );
}
