import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { PlanMigrationTiming } from '../../../shared/vocabulary.js';
import { appendEvent } from '../events/outbox-store.js';
import { currentPeriod } from '../billing/periods.js';
import { upcomingInvoice } from '../billing/upcoming.js';
import type { BillingDeps } from '../billing/deps.js';
import { changeSubscription, getSubscription } from '../subscriptions/store.js';
import { itemOut, type Subscription, type SubscriptionRow } from '../subscriptions/types.js';
import { accountTime } from '../test-clocks/store.js';
import { getPlanVersion } from './store.js';
import { itemsOfPlan } from './subscribe.js';
import type { PlanVersionRow } from './types.js';

/**
 * Moving a plan version's subscribers to another version (docs/plans.md "Moving subscribers"). Each subscription
 * moves in a transaction that holds its row lock and re-reads it: it moves only while it is still on from_version,
 * with its `subscription.updated` in the same transaction. So a run killed at any point leaves every subscription
 * either moved (with its one event) or not, and a second run — after, or at the same time — moves only the rest.
 */
export interface PlanMigration {
  planId: string;
  from: number;
  to: number;
  at: PlanMigrationTiming;
}

/** The subscriptions a migration moves ($1 plan, $2 from_version, $3 to_version): active, on from_version, not yet scheduled. */
const ON_FROM_VERSION = `plan_id = $1 AND plan_version = $2 AND status = 'active'
  AND ($4 = 'now' OR pending_plan_version IS DISTINCT FROM $3)`;
const params = (m: PlanMigration) => [m.planId, m.from, m.to, m.at];

/** Subscriptions moved (or scheduled) per transaction. */
const BATCH = 100;

/**
 * Gives a subscription a plan version's items at `at` — pro-rated exactly as any items change (PATCH
 * /v1/subscriptions, changeSubscription) — and names that version; one `subscription.updated`, in the caller's
 * transaction (changeSubscription emits it when the items differ; the same items on a new version: here).
 */
export async function switchPlanVersion(
  client: PgClient,
  cur: Subscription,
  to: PlanVersionRow,
  at: Date,
): Promise<void> {
  const { changed } = await changeSubscription(
    client,
    cur.row.account_id,
    cur.row.id,
    { items: itemsOfPlan(to.items) },
    at,
  );
  const { rows } = await client.query<SubscriptionRow>(
    `UPDATE subscriptions SET plan_id = $2, plan_version = $3, pending_plan_version = NULL, pending_plan_at = NULL
      WHERE id = $1 RETURNING *`,
    [cur.row.id, to.plan_id, to.version],
  );
  if (!changed)
    await appendEvent(client, {
      accountId: cur.row.account_id,
      type: 'subscription.updated',
      data: { subscription_id: cur.row.id, status: rows[0]!.status, items: cur.items.map(itemOut) },
    });
}

/** Moves one subscription under its row lock, if it is still to be moved; true when it moved (or was scheduled). */
async function moveOne(client: PgClient, m: PlanMigration, to: PlanVersionRow, accountId: string, id: string) {
  const { now } = await accountTime(client, accountId);
  const cur = await getSubscription(client, accountId, id, true);
  const onFrom = cur.row.status === 'active' && cur.row.plan_id === m.planId && cur.row.plan_version === m.from;
  if (!onFrom) return false;
  if (m.at === 'now') {
    await switchPlanVersion(client, cur, to, now);
    return true;
  }
  if (cur.row.pending_plan_version === m.to) return false;
  // At the end of its current period: the billing run applies it then (applyDuePlanChanges).
  await client.query('UPDATE subscriptions SET pending_plan_version = $2, pending_plan_at = $3 WHERE id = $1', [
    id,
    m.to,
    currentPeriod(cur.row, now).end,
  ]);
  return true;
}

/** Both versions must exist (404 otherwise); the version moved to. */
async function versionsOf(pg: PgPool, m: PlanMigration): Promise<PlanVersionRow> {
  const [, to] = await Promise.all([getPlanVersion(pg, m.planId, m.from), getPlanVersion(pg, m.planId, m.to)]);
  return to;
}

/**
 * Applies a migration: every subscription still on from_version, a batch per transaction. Batches skip rows
 * another run holds; when none is left unlocked, a last pass waits for those (a run that dies releases them) so the
 * call returns only once no subscription is left on from_version. Returns how many this call moved.
 */
export async function applyPlanMigration(pg: PgPool, m: PlanMigration): Promise<number> {
  const to = await versionsOf(pg, m);
  let moved = 0;
  let waiting = false;
  for (;;) {
    const batch = await withTransaction(pg, async (c) => {
      const { rows } = await c.query<{ id: string; account_id: string }>(
        `SELECT id, account_id FROM subscriptions WHERE ${ON_FROM_VERSION}
          ORDER BY id LIMIT ${BATCH} FOR UPDATE${waiting ? '' : ' SKIP LOCKED'}`,
        params(m),
      );
      let n = 0;
      for (const s of rows) if (await moveOne(c, m, to, s.account_id, s.id)) n++;
      return { seen: rows.length, moved: n };
    });
    moved += batch.moved;
    if (batch.seen > 0) waiting = false;
    else if (waiting) return moved;
    else waiting = true;
  }
}

export interface MigrationPreview {
  subscription_id: string;
  before: string;
  after: string;
}

/**
 * A migration's dry run: the subscriptions it would move, and for this page of them the upcoming invoice's
 * amount now and once moved. "Once moved" is the move itself, made in a transaction that is rolled back, and the
 * upcoming invoice (services/domain/billing/upcoming.ts) read inside it: the same code as the real move and the
 * real upcoming invoice, so at the same instant (a test clock's) the preview is what the invoice will say.
 */
export async function previewPlanMigration(
  deps: Pick<BillingDeps, 'clickhouse' | 'database'> & { pg: PgPool },
  m: PlanMigration,
  window: RowWindow,
): Promise<{ total: number; preview: MigrationPreview[] }> {
  const to = await versionsOf(deps.pg, m);
  const { rows, total } = await selectPage<{ id: string; account_id: string }>(
    deps.pg,
    { columns: 'id, account_id', from: 'subscriptions', where: ON_FROM_VERSION, params: params(m), orderBy: 'id' },
    window,
  );
  const preview: MigrationPreview[] = [];
  for (const s of rows) {
    const { now } = await accountTime(deps.pg, s.account_id);
    const before = await upcomingInvoice(deps, s.account_id, s.id, now);
    const after = await rolledBack(deps.pg, async (c) => {
      await moveOne(c, m, to, s.account_id, s.id);
      return upcomingInvoice({ ...deps, pg: serialized(c) }, s.account_id, s.id, now);
    });
    preview.push({ subscription_id: s.id, before: before.amount, after: after.amount });
  }
  return { total, preview };
}

/** Runs `fn` in a transaction that is always rolled back: what it wrote is never seen by anyone else. */
async function rolledBack<T>(pool: PgPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    return await fn(client);
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

/**
 * The transaction's client where code expects a pool: its queries one after another (code written for a pool may
 * run two at once; a pg client queues them with a warning).
 */
function serialized(client: PgClient): PgPool {
  let last: Promise<unknown> = Promise.resolve();
  const query = (...args: Parameters<PgClient['query']>) => {
    const run = last.then(() => (client.query as (...a: unknown[]) => Promise<unknown>)(...args));
    last = run.catch(() => undefined);
    return run;
  };
  return { query } as unknown as PgPool;
}
