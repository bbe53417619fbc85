import type { PgClient } from '../../../shared/clients/postgres.js';
import type { ThresholdMinimums } from '../../../shared/money/threshold-minimums.js';
import { setSubscriptionCoupon } from '../coupons/redeem.js';
import { planVersionToSubscribe, itemsOfPlan } from '../plans/subscribe.js';
import { planTerms, subscriptionTermsOfPlan } from '../plans/terms.js';
import { readPortalSettings } from '../portal-settings/settings.js';
import { createSubscription, emitSubscriptionUpdated } from '../subscriptions/store.js';
import { checkCustomerMayCreate } from '../subscriptions/terms-owner.js';
import { checkThresholdMinimum } from '../subscriptions/threshold-minimum.js';
import type { ItemRequest, Subscription, SubscriptionTerms } from '../subscriptions/types.js';
import { lockAccountClock } from '../test-clocks/store.js';
import { customerCurrency, fixCustomerCurrency } from '../customers/currency-store.js';
import { checkPlanPricedIn } from '../plans/price-books.js';

/** What subscribing takes: products, or a plan (its version's items, interval and trial), and the terms asked for. */
export interface Subscribing {
  /** The subscriber (the caller's own account, or the customer an operator acts for). */
  accountId: string;
  /** Ignored when `plan` is given: the plan version's items. */
  items: ItemRequest[];
  /** A plan's version (undefined: the latest). */
  plan?: { id: string; version?: number };
  /** Exact decimal text; null: none. */
  billingThreshold: string | null;
  /** Applied from the first period, in the same transaction (a refused coupon subscribes nothing). */
  couponId?: string | null;
  terms: SubscriptionTerms;
  /** Asked by the operator (an admin token): self-serve settings do not apply. */
  byOperator: boolean;
  /** Made by the operator for a customer: its terms are the operator's (subscriptions/terms-owner.ts). */
  operatorManaged: boolean;
  thresholdMinimums: ThresholdMinimums;
}

/**
 * THE subscribe operation (POST /v1/subscriptions; plans and checkout subscribe through it), in the caller's
 * transaction: the customer's clock lock first (one lock order with attaching it to a test clock), the portal
 * settings' say, the plan version's items and terms, the subscription at the account's time in the customer's currency
 * (price books: fixed on the customer by its first subscription), its threshold's minimum, the coupon, and one `subscription.updated` showing it all. Returns it and the account's time.
 */
export async function subscribe(client: PgClient, s: Subscribing): Promise<{ subscription: Subscription; now: Date }> {
  const { now } = await lockAccountClock(client, s.accountId);
  checkCustomerMayCreate(s.byOperator, (await readPortalSettings(client)).settings);
  const version = s.plan && (await planVersionToSubscribe(client, s.plan.id, s.plan.version));
  // Price books: the customer's currency picks the book; a customer without one takes the plan's (or its products').
  const currency = (await customerCurrency(client, s.accountId)) ?? version?.currency;
  if (version && currency) await checkPlanPricedIn(client, version, currency);
  const subscription = await createSubscription(
    client,
    s.accountId,
    version ? itemsOfPlan(version, currency) : s.items,
    now,
    s.billingThreshold,
    version ? { id: version.plan_id, version: version.version } : null,
    version ? subscriptionTermsOfPlan(planTerms(version), s.terms) : s.terms,
    s.operatorManaged,
    currency,
  );
  await fixCustomerCurrency(client, s.accountId, subscription.row.currency);
  checkThresholdMinimum(subscription.row.billing_threshold, subscription.row.currency, s.thresholdMinimums);
  if (s.couponId != null) await setSubscriptionCoupon(client, subscription, s.couponId, now, { emit: false });
  await emitSubscriptionUpdated(client, subscription);
  return { subscription, now };
}
