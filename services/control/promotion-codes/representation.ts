import type { PromotionCodeRow } from '../../domain/promotion-codes/types.js';

/** A promotion code as the API shows it (shared/api/promotion-codes.ts). */
export function toPromotionCode(p: PromotionCodeRow) {
  return {
    id: p.id,
    coupon_id: p.coupon_id,
    code: p.code,
    max_redemptions: p.max_redemptions,
    times_redeemed: p.times_redeemed,
    expires_at: p.expires_at ? p.expires_at.toISOString() : null,
    first_time_only: p.first_time_only,
    active: p.active,
    created_at: p.created_at.toISOString(),
  };
}
