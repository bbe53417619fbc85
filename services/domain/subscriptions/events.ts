import { JsonDecimal, stringifyJson } from '../../../shared/money/json.js';
import type { EventData } from '../../../shared/api/events.js';
import type { NewEventOf } from '../events/outbox-store.js';
import { collectionPaused, itemOut, type Subscription } from './types.js';

/** A subscription and the coupon discounting it: what `subscription.updated` shows of it. */
export interface SubscriptionState {
  subscription: Subscription;
  couponId: string | null;
}

type Shown = Omit<EventData<'subscription.updated'>, 'subscription_id' | 'previous_attributes'>;

function shown({ subscription: { row, items }, couponId }: SubscriptionState): Shown {
  return {
    status: row.status,
    // A dimension value's price is never flat (the input refuses it); itemOut's type is the wider price model's.
    items: items.map(itemOut) as Shown['items'],
    plan_id: row.plan_id,
    plan_version: row.plan_version,
    billing_threshold: row.billing_threshold === null ? null : { amount: new JsonDecimal(row.billing_threshold) },
    coupon_id: couponId,
    // Its scheduled or done cancellation and its paused collection (docs/billing.md), only while it runs.
    cancel_at_period_end: row.status === 'active' && row.cancel_at !== null,
    collection_paused: row.status === 'active' && collectionPaused(row),
    cancel_at: row.cancel_at?.toISOString() ?? null,
    canceled_at: row.canceled_at?.toISOString() ?? null,
  };
}

/**
 * `subscription.updated`: the subscription as it now is and, when it changed (`before`), the fields that changed as
 * they were (Stripe's `previous_attributes`) — after a plan migration its new plan_version and the one it left.
 */
export function subscriptionUpdated(
  now: SubscriptionState,
  before?: SubscriptionState,
): NewEventOf<'subscription.updated'> {
  const data: EventData<'subscription.updated'> = { subscription_id: now.subscription.row.id, ...shown(now) };
  if (before) {
    const was = shown(before);
    const current = shown(now);
    const keys = Object.keys(current) as (keyof Shown)[];
    const changed = keys.filter((k) => stringifyJson(current[k]) !== stringifyJson(was[k]));
    data.previous_attributes = Object.fromEntries(changed.map((k) => [k, was[k]]));
  }
  return { accountId: now.subscription.row.account_id, type: 'subscription.updated', data };
}

/** `subscription.canceled`, beside the `subscription.updated` of the change that canceled it: the same data. */
export function subscriptionCanceled(updated: NewEventOf<'subscription.updated'>): NewEventOf<'subscription.canceled'> {
  return { accountId: updated.accountId, type: 'subscription.canceled', data: updated.data };
}
