/** A promotion code as stored (infra/migrations/postgres/820_promotion_codes.sql): a customer-facing code for a coupon. */
export interface PromotionCodeRow {
  id: string;
  coupon_id: string;
  code: string;
  max_redemptions: number | null;
  times_redeemed: number;
  expires_at: Date | null;
  first_time_only: boolean;
  active: boolean;
  created_at: Date;
}

export type NewPromotionCode = Pick<
  PromotionCodeRow,
  'coupon_id' | 'code' | 'max_redemptions' | 'expires_at' | 'first_time_only'
>;
