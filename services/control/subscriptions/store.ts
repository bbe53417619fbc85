import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { newId, hasPrefix } from '../../../shared/ids.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/http/pagination.js';
import { appendEvent } from '../events/outbox.js';
import { resolveItems, sameItems } from './items.js';
import { itemOut, type Item, type ItemRequest, type Subscription, type SubscriptionRow } from './schemas.js';

type Queryable = Pick<PgPool, 'query'> | PgClient;

const notFound = (id: string) => new NotFoundError(`No subscription ${id}.`);

async function itemsOf(q: Queryable, ids: string[]): Promise<Map<string, Item[]>> {
  const out = new Map<string, Item[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const r = await q.query<Item & { subscription_id: string }>(
    'SELECT subscription_id, product_id, meter_id, minimum_amount::text AS minimum_amount, group_by FROM subscription_items WHERE subscription_id = ANY($1) ORDER BY subscription_id, position',
    [ids],
  );
  for (const row of r.rows) out.get(row.subscription_id)!.push({ product_id: row.product_id, meter_id: row.meter_id, minimum_amount: row.minimum_amount, group_by: row.group_by });
  return out;
}

export async function listSubscriptions(
  pool: PgPool,
  accountId: string,
  q: { status?: string },
  window: RowWindow,
): Promise<{ subscriptions: Subscription[]; total: number }> {
  const { rows, total } = await selectPage<SubscriptionRow>(
    pool,
    { columns: '*', from: 'subscriptions', where: 'account_id = $1 AND ($2::text IS NULL OR status = $2)', params: [accountId, q.status ?? null], orderBy: 'created_at DESC, id DESC' },
    window,
  );
  const items = await itemsOf(pool, rows.map((r) => r.id));
  return { subscriptions: rows.map((row) => ({ row, items: items.get(row.id)! })), total };
}

/** One subscription of the account (404 for another account's id); `lock` takes the row lock for a change. */
export async function getSubscription(q: Queryable, accountId: string, id: string, lock = false): Promise<Subscription> {
  if (!hasPrefix(id, 'sub')) throw notFound(id);
  const r = await q.query<SubscriptionRow>(`SELECT * FROM subscriptions WHERE id = $1 AND account_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, accountId]);
  if (!r.rows[0]) throw notFound(id);
  return { row: r.rows[0], items: (await itemsOf(q, [id])).get(id)! };
}

async function writeItems(client: PgClient, subscriptionId: string, items: Item[]): Promise<void> {
  await client.query('DELETE FROM subscription_items WHERE subscription_id = $1', [subscriptionId]);
  await client.query(
    `INSERT INTO subscription_items (subscription_id, position, product_id, meter_id, minimum_amount, group_by)
     SELECT $1, p.ord - 1, p.product_id, p.meter_id, p.minimum_amount, ARRAY(SELECT jsonb_array_elements_text(p.group_by))
       FROM unnest($2::text[], $3::text[], $4::numeric[], $5::jsonb[]) WITH ORDINALITY AS p(product_id, meter_id, minimum_amount, group_by, ord)`,
    [subscriptionId, items.map((i) => i.product_id), items.map((i) => i.meter_id), items.map((i) => i.minimum_amount), items.map((i) => JSON.stringify(i.group_by))],
  );
}

/** `subscription.updated` in the same transaction as the change: published if and only if it commits. */
async function emitUpdated(client: PgClient, s: Subscription): Promise<void> {
  await appendEvent(client, {
    accountId: s.row.account_id,
    type: 'subscription.updated',
    data: { subscription_id: s.row.id, status: s.row.status, items: s.items.map(itemOut) },
  });
}

/** Creates a subscription inside the caller's transaction. */
export async function createSubscription(client: PgClient, accountId: string, input: ItemRequest[]): Promise<Subscription> {
  const { items, currency } = await resolveItems(client, accountId, input);
  const r = await client.query<SubscriptionRow>(
    `INSERT INTO subscriptions (id, account_id, status, currency) VALUES ($1, $2, 'active', $3) RETURNING *`,
    [newId('sub'), accountId, currency],
  );
  const sub = { row: r.rows[0]!, items };
  await writeItems(client, sub.row.id, items);
  await emitUpdated(client, sub);
  return sub;
}

/**
 * Replaces the items and/or cancels, inside the caller's transaction. A canceled subscription is final:
 * changing it → 409 subscription_canceled (canceling it again changes nothing). A request that changes
 * nothing writes nothing and emits nothing.
 */
export async function changeSubscription(
  client: PgClient,
  accountId: string,
  id: string,
  change: { items?: ItemRequest[]; status?: 'canceled' },
): Promise<{ subscription: Subscription; changed: boolean }> {
  const cur = await getSubscription(client, accountId, id, true);
  if (cur.row.status === 'canceled') {
    if (change.items === undefined) return { subscription: cur, changed: false };
    throw new ConflictError(`Subscription ${id} is canceled and can no longer change.`, 'subscription_canceled');
  }
  let items = cur.items;
  if (change.items !== undefined) items = (await resolveItems(client, accountId, change.items, cur.row.currency)).items;
  const itemsChanged = !sameItems(items, cur.items);
  const cancel = change.status === 'canceled';
  if (!itemsChanged && !cancel) return { subscription: cur, changed: false };

  if (itemsChanged) await writeItems(client, id, items);
  const r = await client.query<SubscriptionRow>(
    `UPDATE subscriptions SET updated_at = now(),
            status = CASE WHEN $2 THEN 'canceled' ELSE status END,
            canceled_at = CASE WHEN $2 THEN now() ELSE canceled_at END
      WHERE id = $1 RETURNING *`,
    [id, cancel],
  );
  const sub = { row: r.rows[0]!, items };
  await emitUpdated(client, sub);
  return { subscription: sub, changed: true };
}
