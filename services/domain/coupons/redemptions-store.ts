import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { COUPON_COLUMNS } from './store.js';
import type { CouponRow } from './types.js';

/**
 * Redemptions' SQL (the rule of applying a coupon is redeem.ts): a subscription's coupon history, one row per coupon
 * applied (open while `ended_at` is null), and each coupon's count of redemptions. All in the caller's transaction.
 */

/** Ends the subscription's current redemption, if any, at `now` and the usage period starting `periodStart`. */
export async function endCurrentRedemption(
  client: PgClient,
  subscriptionId: string,
  now: Date,
  periodStart: Date,
): Promise<void> {
  await client.query(
    `UPDATE coupon_redemptions SET ended_at = $2, ended_period_start = $3 WHERE subscription_id = $1 AND ended_at IS NULL`,
    [subscriptionId, now, periodStart],
  );
}

export async function insertRedemption(
  client: PgClient,
  r: { couponId: string; subscriptionId: string; accountId: string; firstPeriodStart: Date; redeemedAt: Date },
): Promise<void> {
  await client.query(
    `INSERT INTO coupon_redemptions (coupon_id, subscription_id, account_id, first_period_start, redeemed_at)
       VALUES ($1, $2, $3, $4, $5)`,
    [r.couponId, r.subscriptionId, r.accountId, r.firstPeriodStart, r.redeemedAt],
  );
}

/**
 * Counts one redemption of the coupon unless it has none left, checked and counted in one statement: a concurrent
 * redemption of the last slot waits for this row and then finds it full. False: none left.
 */
export async function takeRedemptionSlot(client: PgClient, couponId: string): Promise<boolean> {
  const taken = await client.query(
    `UPDATE coupons SET times_redeemed = times_redeemed + 1
      WHERE id = $1 AND (max_redemptions IS NULL OR times_redeemed < max_redemptions)`,
    [couponId],
  );
  return taken.rowCount !== 0;
}

/** The open redemptions of the subscriptions, each with its coupon. */
export async function openRedemptions(
  q: PgPool | PgClient,
  subscriptionIds: string[],
): Promise<(CouponRow & { subscription_id: string; first_period_start: Date; redeemed_at: Date })[]> {
  const { rows } = await q.query<CouponRow & { subscription_id: string; first_period_start: Date; redeemed_at: Date }>(
    `SELECT r.subscription_id, r.first_period_start, r.redeemed_at, ${COUPON_COLUMNS('c')}
       FROM coupon_redemptions r JOIN coupons c ON c.id = r.coupon_id
      WHERE r.subscription_id = ANY($1) AND r.ended_at IS NULL`,
    [subscriptionIds],
  );
  return rows;
}
