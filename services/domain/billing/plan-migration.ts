import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { currentPeriod } from '../subscriptions/periods.js';
import { upcomingInvoice } from './upcoming.js';
import type { BillingDeps } from './deps.js';
import { accountTime } from '../test-clocks/store.js';
import { getPlanVersion } from '../plans/store.js';
import { ValidationError } from '../../../shared/errors.js';
import { switchPlanVersion } from '../plans/switch.js';
import type { PlanVersionRow } from '../plans/types.js';
import { schedulePlanChange } from '../plans/change-store.js';
import {
  lockMigrationBatch,
  lockSubscriptionRow,
  migrationPage,
  type MigrationRow,
  type PlanMigration,
} from './plan-changes-store.js';

/**
 * Moving a plan version's subscribers to another version (docs/plans.md "Moving subscribers"). Each subscription
 * moves in a transaction that holds its row lock and re-reads it: it moves only while it is still on from_version,
 * with its `subscription.updated` in the same transaction. So a run killed at any point leaves every subscription
 * either moved (with its one event) or not, and a second run — after, or at the same time — moves only the rest.
 */
export type { PlanMigration };

/** Subscriptions moved (or scheduled) per transaction, and transactions at once (connections of the pool). */
const BATCH = 100;
const WORKERS = 3;

/**
 * Moves one subscription the caller locked with lockMigrationBatch and holds the row lock of (so it is still to be
 * moved: a second run waiting on the lock re-reads the row and leaves it), at the account's time `now`.
 */
async function moveOne(client: PgClient, m: PlanMigration, to: PlanVersionRow, s: MigrationRow, now: Date) {
  if (m.at === 'now') return switchPlanVersion(client, s.account_id, s.id, to, now);
  // At the end of its current period: the billing run applies it then (applyDuePlanChanges).
  // A version of its own plan: no pending_plan_id.
  await schedulePlanChange(client, s.id, null, m.to, currentPeriod(s, now).end);
}

/** Each account's time (a test clock's for a clocked customer), read once per batch. */
async function accountTimes(client: PgClient, rows: MigrationRow[]): Promise<Map<string, Date>> {
  const out = new Map<string, Date>();
  for (const r of rows)
    if (!out.has(r.account_id)) out.set(r.account_id, (await accountTime(client, r.account_id)).now);
  return out;
}

/**
 * Both versions must exist (404 otherwise) and bill the same interval: a move changes a subscription's items, never
 * its periods (a subscriber changes interval by a new subscription). The version moved to.
 */
async function versionsOf(pg: PgPool, m: PlanMigration): Promise<PlanVersionRow> {
  const [from, to] = await Promise.all([getPlanVersion(pg, m.planId, m.from), getPlanVersion(pg, m.planId, m.to)]);
  if (from.interval !== to.interval || from.interval_count !== to.interval_count)
    throw new ValidationError([
      {
        field: 'to_version',
        message: `bills every ${to.interval_count} ${to.interval}, version ${m.from} every ${from.interval_count} ${from.interval}: a migration keeps the interval`,
      },
    ]);
  return to;
}

/**
 * Applies a migration: every subscription still on from_version, a batch per transaction, WORKERS batches at a
 * time. Batches skip rows another batch or run holds; when none is left unlocked, a last pass waits for those (a
 * run that dies releases them) so the call returns only once no subscription is left on from_version. Every
 * blocking pass locks rows in id order, so passes never wait on each other in a cycle. Returns how many this call
 * moved.
 */
export async function applyPlanMigration(pg: PgPool, m: PlanMigration): Promise<number> {
  const to = await versionsOf(pg, m);
  const worker = async () => {
    let moved = 0;
    let waiting = false;
    for (;;) {
      const batch = await withTransaction(pg, async (c) => {
        const rows = await lockMigrationBatch(c, m, BATCH, waiting);
        const times = await accountTimes(c, rows);
        for (const s of rows) await moveOne(c, m, to, s, times.get(s.account_id)!);
        return rows.length;
      });
      moved += batch;
      if (batch > 0) waiting = false;
      else if (waiting) return moved;
      else waiting = true;
    }
  };
  const moved = await Promise.all(Array.from({ length: WORKERS }, worker));
  return moved.reduce((a, b) => a + b, 0);
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
  const { rows, total } = await migrationPage(deps.pg, m, window);
  const preview: MigrationPreview[] = [];
  for (const s of rows) {
    const { now } = await accountTime(deps.pg, s.account_id);
    const before = await upcomingInvoice(deps, s.account_id, s.id, now);
    const after = await rolledBack(deps.pg, async (c) => {
      await lockSubscriptionRow(c, s.id);
      await moveOne(c, m, to, s, now);
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
