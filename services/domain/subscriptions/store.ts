import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { newId, hasPrefix } from '../../../shared/ids.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import { Decimal } from '../../../shared/money/decimal.js';
import { minorUnits } from '../../../shared/money/currencies.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { appendEvent } from '../events/outbox-store.js';
import { itemKey, resolveItems, sameItem, sameItems } from './items.js';
import { subscriptionCanceled, subscriptionUpdated } from './events.js';
import { collectionPaused } from './types.js';
import type { Item, ItemRequest, Subscription, SubscriptionRow, SubscriptionTerms } from './types.js';
import { billingStart, billsUsageMonthly, currentPeriod } from './periods.js';
import { checkTermBounds } from './term-bounds.js';

type Queryable = Pick<PgPool, 'query'> | PgClient;

const notFound = (id: string) => new NotFoundError(`No subscription ${id}.`);

async function itemsOf(q: Queryable, ids: string[]): Promise<Map<string, Item[]>> {
  const out = new Map<string, Item[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const r = await q.query<Item & { subscription_id: string }>(
    `SELECT subscription_id, product_id, meter_id, minimum_amount::text AS minimum_amount, group_by, dimension_prices, quantity FROM subscription_items
      WHERE subscription_id = ANY($1) AND effective_to IS NULL ORDER BY subscription_id, position`,
    [ids],
  );
  for (const row of r.rows) {
    out.get(row.subscription_id)!.push({
      product_id: row.product_id,
      meter_id: row.meter_id,
      minimum_amount: row.minimum_amount,
      group_by: row.group_by,
      dimension_prices: row.dimension_prices,
      quantity: row.quantity,
    });
  }
  return out;
}

export async function listSubscriptions(
  pool: PgPool,
  accountId: string | null,
  q: { status?: string },
  window: RowWindow,
): Promise<{ subscriptions: Subscription[]; total: number }> {
  const { rows, total } = await selectPage<SubscriptionRow>(
    pool,
    {
      columns: '*',
      from: 'subscriptions',
      // accountId null: every account's (an operator's deployment-wide list, accountsListedFor).
      where: '($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR status = $2)',
      params: [accountId, q.status ?? null],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
  const items = await itemsOf(
    pool,
    rows.map((r) => r.id),
  );
  return { subscriptions: rows.map((row) => ({ row, items: items.get(row.id)! })), total };
}

/** Up to `limit` ids of the account's active subscriptions, oldest first. */
export async function activeSubscriptionIds(q: Queryable, accountId: string, limit: number): Promise<string[]> {
  const r = await q.query<{ id: string }>(
    `SELECT id FROM subscriptions WHERE account_id = $1 AND status = 'active' ORDER BY created_at, id LIMIT $2`,
    [accountId, limit],
  );
  return r.rows.map((row) => row.id);
}

/** One subscription of the account (404 for another account's id); `lock` takes the row lock for a change. */
export async function getSubscription(
  q: Queryable,
  accountId: string,
  id: string,
  lock = false,
): Promise<Subscription> {
  if (!hasPrefix(id, 'sub')) throw notFound(id);
  const r = await q.query<SubscriptionRow>(
    `SELECT * FROM subscriptions WHERE id = $1 AND account_id = $2${lock ? ' FOR UPDATE' : ''}`,
    [id, accountId],
  );
  if (!r.rows[0]) throw notFound(id);
  return { row: r.rows[0], items: (await itemsOf(q, [id])).get(id)! };
}

/**
 * Writes the items, keeping their history (infra/migrations/postgres/446_subscription_item_history.sql): at
 * creation every item is on from the start ('-infinity'); on a change, an item kept on the same terms keeps
 * its row (only its position may move), and every other current row is closed and every new or altered item
 * opened at the change's instant (`now`: the account's time, its test clock's for a clocked customer), which the
 * billing run pro-rates around.
 */
async function writeItems(
  client: PgClient,
  subscriptionId: string,
  items: Item[],
  before: Item[] | null,
  now: Date,
): Promise<void> {
  const kept = new Map<string, number>();
  if (before) {
    const stillOn = new Map(items.map((item, position) => [itemKey(item), { item, position }]));
    const keep = before.filter((b) => {
      const next = stillOn.get(itemKey(b));
      return next !== undefined && sameItem(b, next.item);
    });
    for (const b of keep) kept.set(itemKey(b), stillOn.get(itemKey(b))!.position);
    await client.query(
      `UPDATE subscription_items si SET effective_to = CASE WHEN k.position IS NULL THEN $5::timestamptz END, position = COALESCE(k.position, si.position)
         FROM subscription_items cur LEFT JOIN unnest($2::text[], $3::text[], $4::int[]) AS k(product_id, meter_id, position)
              ON k.product_id = cur.product_id AND k.meter_id IS NOT DISTINCT FROM cur.meter_id
        WHERE cur.id = si.id AND si.subscription_id = $1 AND si.effective_to IS NULL`,
      [
        subscriptionId,
        keep.map((b) => b.product_id),
        keep.map((b) => b.meter_id),
        keep.map((b) => kept.get(itemKey(b))!),
        now,
      ],
    );
  }
  const added = items.map((item, position) => ({ item, position })).filter(({ item }) => !kept.has(itemKey(item)));
  if (added.length === 0) return;
  await client.query(
    `INSERT INTO subscription_items (subscription_id, position, product_id, meter_id, minimum_amount, group_by, quantity, effective_from, dimension_prices)
     SELECT $1, p.position, p.product_id, p.meter_id, p.minimum_amount, ARRAY(SELECT jsonb_array_elements_text(p.group_by)), p.quantity,
            CASE WHEN $8 THEN $9::timestamptz ELSE '-infinity' END, NULLIF(p.dimension_prices, 'null'::jsonb)
       FROM unnest($2::int[], $3::text[], $4::text[], $5::numeric[], $6::jsonb[], $7::int[], $10::jsonb[]) AS p(position, product_id, meter_id, minimum_amount, group_by, quantity, dimension_prices)`,
    [
      subscriptionId,
      added.map((a) => a.position),
      added.map((a) => a.item.product_id),
      added.map((a) => a.item.meter_id),
      added.map((a) => a.item.minimum_amount),
      added.map((a) => JSON.stringify(a.item.group_by)),
      added.map((a) => a.item.quantity),
      before !== null,
      now,
      added.map((a) => JSON.stringify(a.item.dimension_prices)),
    ],
  );
}

/** A billing threshold is money in the subscription's currency: at most its minor unit's decimals. */
function checkThreshold(amount: string, currency: string): void {
  const scale = minorUnits(currency);
  if (new Decimal(amount).decimalPlaces() > scale)
    throw new ValidationError([
      { field: 'billing_threshold.amount', message: `must have at most ${scale} decimal places in ${currency}` },
    ]);
}

/** The plan change scheduled for the period's end is done (or no longer applies). */
export async function clearPendingPlanChange(client: PgClient, subscriptionId: string): Promise<void> {
  await client.query('UPDATE subscriptions SET pending_plan_version = NULL, pending_plan_at = NULL WHERE id = $1', [
    subscriptionId,
  ]);
}

/** The coupon discounting the subscription now (services/domain/coupons/redeem.ts applies them), or null. */
export async function currentCouponId(client: PgClient, subscriptionId: string): Promise<string | null> {
  const r = await client.query<{ coupon_id: string }>(
    'SELECT coupon_id FROM coupon_redemptions WHERE subscription_id = $1 AND ended_at IS NULL',
    [subscriptionId],
  );
  return r.rows[0]?.coupon_id ?? null;
}

/**
 * `subscription.updated` in the same transaction as the change (published if and only if it commits): the
 * subscription as it now is, with its current coupon, and what changed since `before` (none: it was created); and
 * `subscription.canceled` too, with the same data, when the change canceled it (once per cancellation).
 */
export async function emitSubscriptionUpdated(
  client: PgClient,
  s: Subscription,
  before?: Subscription,
  canceled = false,
): Promise<void> {
  const couponId = await currentCouponId(client, s.row.id);
  const updated = subscriptionUpdated({ subscription: s, couponId }, before && { subscription: before, couponId });
  await appendEvent(client, updated);
  if (canceled) await appendEvent(client, subscriptionCanceled(updated));
}

/**
 * Creates a subscription inside the caller's transaction, at `now`: the account's time (services/domain/test-clocks
 * accountTime), so a customer on a test clock starts its first period at the clock's time.
 */
export async function createSubscription(
  client: PgClient,
  accountId: string,
  input: ItemRequest[],
  now: Date = new Date(),
  billingThreshold: string | null = null,
  /** The plan version the items come from (docs/plans.md), if any. */
  plan: { id: string; version: number } | null = null,
  terms: SubscriptionTerms = {},
  /** Made by the operator (an admin token): terms-owner.ts decides what its customer may change. */
  operatorManaged = false,
  /** Price books: the currency to price it in (the customer's); undefined: its products' own one. */
  requiredCurrency?: string,
): Promise<Subscription> {
  const { items, currency } = await resolveItems(client, accountId, input, requiredCurrency);
  if (billingThreshold !== null) checkThreshold(billingThreshold, currency);
  if (terms.trial_end && terms.trial_end.getTime() <= now.getTime())
    throw new ValidationError([{ field: 'trial_end', message: `must be after now (${now.toISOString()})` }]);
  const start = billingStart(terms, now);
  checkTermBounds(start, now);
  const r = await client.query<SubscriptionRow>(
    `INSERT INTO subscriptions (id, account_id, status, currency, created_at, updated_at, billing_threshold,
                                "interval", interval_count, billing_anchor, trial_end,
                                billing_period_start, billing_period_end, advance_period_start, advance_period_end,
                                plan_id, plan_version, operator_managed)
     VALUES ($1, $2, 'active', $3, $4, $4, $5::numeric, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING *`,
    [
      newId('sub'),
      accountId,
      currency,
      now,
      billingThreshold,
      start.terms.interval,
      start.terms.interval_count,
      start.terms.billing_anchor,
      start.trialEnd,
      start.usage.start,
      start.usage.end,
      start.advance?.start ?? null,
      start.advance?.end ?? null,
      plan?.id ?? null,
      plan?.version ?? null,
      operatorManaged,
    ],
  );
  const sub = { row: r.rows[0]!, items };
  await writeItems(client, sub.row.id, items, null, now);
  return sub;
}

/**
 * Replaces the items and/or cancels (now, or at the end of the current period: `cancelAtPeriodEnd`, false undoes
 * it), inside the caller's transaction. A canceled subscription is final: changing it → 409
 * subscription_canceled (canceling it again changes nothing). A request that changes nothing writes nothing and
 * emits nothing.
 */
export async function changeSubscription(
  client: PgClient,
  accountId: string,
  id: string,
  change: {
    items?: ItemRequest[];
    status?: 'canceled';
    billingThreshold?: string | null;
    cancelAtPeriodEnd?: boolean;
    pauseCollection?: boolean;
    /** The plan version the items now come from (a plan migration); without it changed items leave their plan. */
    plan?: { id: string; version: number };
  },
  now: Date = new Date(),
): Promise<{ subscription: Subscription; changed: boolean }> {
  const cur = await getSubscription(client, accountId, id, true);
  if (cur.row.status === 'canceled') {
    if (
      change.items === undefined &&
      change.billingThreshold === undefined &&
      change.cancelAtPeriodEnd === undefined &&
      change.pauseCollection === undefined
    )
      return { subscription: cur, changed: false };
    throw new ConflictError(`Subscription ${id} is canceled and can no longer change.`, 'subscription_canceled');
  }
  let items = cur.items;
  if (change.items !== undefined) items = (await resolveItems(client, accountId, change.items, cur.row.currency)).items;
  if (change.billingThreshold) checkThreshold(change.billingThreshold, cur.row.currency);
  const itemsChanged = !sameItems(items, cur.items);
  const cancel = change.status === 'canceled';
  const threshold = change.billingThreshold === undefined ? cur.row.billing_threshold : change.billingThreshold;
  const thresholdChanged =
    (threshold === null) !== (cur.row.billing_threshold === null) ||
    (threshold !== null && !new Decimal(threshold).eq(cur.row.billing_threshold!));
  const cancelAt = scheduledCancel(cur.row, change.cancelAtPeriodEnd, now);
  const cancelAtChanged = cancelAt?.getTime() !== cur.row.cancel_at?.getTime();
  const pausing = change.pauseCollection === undefined ? null : change.pauseCollection;
  const pauseChanged = pausing !== null && pausing !== collectionPaused(cur.row);
  if (pausing === true && pauseChanged) checkPausable(cur.row, threshold);
  const plan = change.plan ?? null;
  const planChanged = plan !== null && (plan.id !== cur.row.plan_id || plan.version !== cur.row.plan_version);
  if (!itemsChanged && !cancel && !thresholdChanged && !cancelAtChanged && !pauseChanged && !planChanged)
    return { subscription: cur, changed: false };

  if (itemsChanged) await writeItems(client, id, items, cur.items, now);
  const r = await client.query<SubscriptionRow>(
    `UPDATE subscriptions SET updated_at = $3,
            status = CASE WHEN $2 THEN 'canceled' ELSE status END,
            canceled_at = CASE WHEN $2 THEN $3::timestamptz ELSE canceled_at END,
            cancel_at = CASE WHEN $2 THEN NULL ELSE $6::timestamptz END,
            collection_paused_at = CASE WHEN $7 AND $8 THEN $3::timestamptz ELSE collection_paused_at END,
            collection_resumed_at = CASE WHEN $7 THEN (CASE WHEN $8 THEN NULL ELSE $3::timestamptz END) ELSE collection_resumed_at END,
            billing_threshold = $4::numeric,
            -- items changed by hand are no longer the plan's (nor does a scheduled plan change still apply);
            -- a plan migration names the version they now come from
            plan_id = CASE WHEN $9::text IS NOT NULL THEN $9 WHEN $5 THEN NULL ELSE plan_id END,
            plan_version = CASE WHEN $9::text IS NOT NULL THEN $10::int WHEN $5 THEN NULL ELSE plan_version END,
            pending_plan_version = CASE WHEN $5 OR $2 THEN NULL ELSE pending_plan_version END,
            pending_plan_at = CASE WHEN $5 OR $2 THEN NULL ELSE pending_plan_at END,
            -- Canceled during its trial: nothing is ever billed (docs/billing.md "Trials").
            billing_period_start = CASE WHEN $2 AND trial_end > $3 THEN NULL ELSE billing_period_start END,
            billing_period_end = CASE WHEN $2 AND trial_end > $3 THEN NULL ELSE billing_period_end END,
            advance_period_start = CASE WHEN $2 AND trial_end > $3 THEN NULL ELSE advance_period_start END,
            advance_period_end = CASE WHEN $2 AND trial_end > $3 THEN NULL ELSE advance_period_end END
      WHERE id = $1 RETURNING *`,
    [
      id,
      cancel,
      now,
      threshold,
      itemsChanged,
      cancelAt,
      pauseChanged,
      pausing === true,
      plan?.id ?? null,
      plan?.version ?? null,
    ],
  );
  const sub = { row: r.rows[0]!, items };
  await emitSubscriptionUpdated(client, sub, cur, cancel);
  return { subscription: sub, changed: true };
}

/**
 * The instant a subscription is to cancel after a change: `true` schedules the end of the period it is in at `now`
 * (kept if already scheduled), `false` clears it, absent keeps what it was.
 */
function scheduledCancel(row: SubscriptionRow, cancelAtPeriodEnd: boolean | undefined, now: Date): Date | null {
  if (cancelAtPeriodEnd === undefined) return row.cancel_at;
  if (!cancelAtPeriodEnd) return null;
  return row.cancel_at ?? currentPeriod(row, now).end;
}

/**
 * Pausing collection covers the invoices of period ends (docs/billing.md "Pause collection"): a subscription also
 * invoiced otherwise — in advance (periods longer than a month) or at a billing threshold — is refused (409
 * pause_unsupported) rather than half paused.
 */
function checkPausable(row: SubscriptionRow, threshold: string | null): void {
  if (billsUsageMonthly(row) || threshold !== null)
    throw new ConflictError(
      `Subscription ${row.id} is also invoiced in advance or at a billing threshold: its collection cannot be paused.`,
      'pause_unsupported',
    );
}
