import type { PgClient } from '../../../shared/clients/postgres.js';
import { ConflictError, ValidationError } from '../../../shared/errors.js';
import { accountHasInvoices, findPromotionCodeByCode, takePromotionCodeRedemption } from './store.js';
import type { PromotionCodeRow } from './types.js';

/**
 * THE rule of redeeming a promotion code (checkout, the portal), in the caller's transaction: the code typed, whatever
 * its case, for the account redeeming it at `now` (the account's time). Each refusal is a precise problem on `field`:
 * unknown (422 promotion_code_invalid), deactivated (409 promotion_code_inactive), expired (409
 * promotion_code_expired), first_time_only for an account already invoiced (409 promotion_code_first_time_only), no
 * redemption left (409 promotion_code_exhausted — counted by one conditional UPDATE, so N concurrent redemptions of k
 * slots make exactly min(N, k)). Returns the code, whose coupon the caller then applies (and counts) as any coupon.
 * A refusal later in the caller's transaction rolls the count back with it.
 */
export async function redeemPromotionCode(
  client: PgClient,
  typed: string,
  accountId: string | null,
  now: Date,
  field = 'promotion_code',
): Promise<PromotionCodeRow> {
  const code = await findPromotionCodeByCode(client, typed.trim());
  if (!code)
    throw new ValidationError(
      [{ field, message: 'no such code' }],
      'This promotion code does not exist.',
      'promotion_code_invalid',
    );
  const refuse = (detail: string, c: string, message: string) => new ConflictError(detail, c, [{ field, message }]);
  if (!code.active) throw refuse(`The code ${code.code} is no longer active.`, 'promotion_code_inactive', 'inactive');
  if (code.expires_at && code.expires_at.getTime() <= now.getTime())
    throw refuse(
      `The code ${code.code} expired at ${code.expires_at.toISOString()}.`,
      'promotion_code_expired',
      'expired',
    );
  if (code.first_time_only && accountId !== null && (await accountHasInvoices(client, accountId)))
    throw refuse(
      `The code ${code.code} is for first-time customers only.`,
      'promotion_code_first_time_only',
      'for first-time customers only',
    );
  if (!(await takePromotionCodeRedemption(client, code.id)))
    throw refuse(
      `The code ${code.code} was redeemed ${code.max_redemptions} times, its max_redemptions.`,
      'promotion_code_exhausted',
      'has no redemption left',
    );
  return code;
}
