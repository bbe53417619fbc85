import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { resolveItems } from '../subscriptions/items.js';
import type { Item, ItemRequest } from '../subscriptions/types.js';
import type { NewPlan, PlanVersionChange, PlanVersionRow } from './types.js';
import { checkPlanBooks } from './price-books.js';

type Queryable = Pick<PgPool, 'query'> | PgClient;

/** Plans' SQL: the deployment's plans and their versions (docs/plans.md). A version is written once, never changed. */
const COLUMNS = 'plan_id, version, name, currency, interval, interval_count, items, trial_days, created_at';
const notFound = (id: string, version?: number) =>
  new NotFoundError(version === undefined ? `No plan ${id}.` : `Plan ${id} has no version ${version}.`);

/**
 * A plan belongs to no account: its usage-priced items name deployment meters only (every customer can meter
 * them). resolveItems accepts the meters of the account it is given and the deployment's: no account has this id.
 */
const NO_ACCOUNT = '';

/**
 * The items as a subscription's items (the one rule, services/domain/subscriptions/items.ts), each product priced in
 * the plan's currency (its own or a price book: 422 currency_not_priced naming the item); their own price books in
 * other currencies than the plan's (checkPlanBooks).
 */
async function planItems(client: PgClient, input: ItemRequest[], currency: string): Promise<Item[]> {
  checkPlanBooks(input, currency);
  return (await resolveItems(client, NO_ACCOUNT, input, currency)).items;
}

async function insertVersion(client: PgClient, v: Omit<PlanVersionRow, 'created_at'>): Promise<PlanVersionRow> {
  const { rows } = await client.query<PlanVersionRow>(
    `INSERT INTO plan_versions (plan_id, version, name, currency, interval, interval_count, items, trial_days)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) RETURNING ${COLUMNS}`,
    [v.plan_id, v.version, v.name, v.currency, v.interval, v.interval_count, JSON.stringify(v.items), v.trial_days],
  );
  return rows[0]!;
}

export async function insertPlan(pool: PgPool, p: NewPlan): Promise<PlanVersionRow> {
  return withTransaction(pool, async (c) => {
    const items = await planItems(c, p.items, p.currency);
    const id = newId('plan');
    await c.query('INSERT INTO plans (id, latest_version) VALUES ($1, 1)', [id]);
    return insertVersion(c, { ...p, items, plan_id: id, version: 1 });
  });
}

/** The next version: the latest with `change` applied. Concurrent calls queue on the plan's row: 2, 3, … */
export async function addPlanVersion(pool: PgPool, id: string, change: PlanVersionChange): Promise<PlanVersionRow> {
  if (!hasPrefix(id, 'plan')) throw notFound(id);
  return withTransaction(pool, async (c) => {
    const { rows } = await c.query<{ latest_version: number }>(
      'UPDATE plans SET latest_version = latest_version + 1 WHERE id = $1 RETURNING latest_version',
      [id],
    );
    if (!rows[0]) throw notFound(id);
    const latest = await getPlanVersion(c, id, rows[0].latest_version - 1);
    const items = change.items ? await planItems(c, change.items, latest.currency) : latest.items;
    return insertVersion(c, {
      plan_id: id,
      version: rows[0].latest_version,
      name: change.name ?? latest.name,
      currency: latest.currency,
      interval: change.interval ?? latest.interval,
      interval_count: change.interval_count ?? latest.interval_count,
      items,
      trial_days: change.trial_days ?? latest.trial_days,
    });
  });
}

/** A version of a plan (default: the latest); unknown plan or version → 404. */
export async function getPlanVersion(q: Queryable, id: string, version?: number): Promise<PlanVersionRow> {
  if (!hasPrefix(id, 'plan')) throw notFound(id);
  const { rows } = await q.query<PlanVersionRow>(
    `SELECT ${COLUMNS} FROM plan_versions
      WHERE plan_id = $1 AND version = COALESCE($2::int, (SELECT latest_version FROM plans WHERE id = $1))`,
    [id, version ?? null],
  );
  if (rows[0]) return rows[0];
  if (version !== undefined && (await q.query('SELECT 1 FROM plans WHERE id = $1', [id])).rowCount)
    throw notFound(id, version);
  throw notFound(id);
}

/** Every plan as its latest version, newest plan first. */
export async function listPlans(pool: PgPool, window: RowWindow): Promise<{ rows: PlanVersionRow[]; total: number }> {
  return selectPage<PlanVersionRow>(
    pool,
    {
      columns: COLUMNS.split(', ')
        .map((c) => (c === 'created_at' ? 'v.created_at' : c))
        .join(', '),
      from: 'plans p JOIN plan_versions v ON v.plan_id = p.id AND v.version = p.latest_version',
      where: 'true',
      params: [],
      orderBy: 'p.created_at DESC, p.id DESC',
    },
    window,
  );
}

/** The currencies of a version's active subscribers (price books: a move to another version must price each). */
export async function subscriberCurrencies(q: Queryable, planId: string, version: number): Promise<string[]> {
  const { rows } = await q.query<{ currency: string }>(
    `SELECT DISTINCT currency FROM subscriptions
      WHERE plan_id = $1 AND plan_version = $2 AND status = 'active' ORDER BY currency`,
    [planId, version],
  );
  return rows.map((r) => r.currency);
}

/** A subscription's currency (its row locked by the caller): the book a plan version's items are taken from. */
export async function subscriptionCurrency(q: Queryable, accountId: string, subscriptionId: string): Promise<string> {
  const { rows } = await q.query<{ currency: string }>(
    'SELECT currency FROM subscriptions WHERE id = $1 AND account_id = $2',
    [subscriptionId, accountId],
  );
  if (!rows[0]) throw new NotFoundError(`No subscription ${subscriptionId}.`);
  return rows[0].currency;
}
