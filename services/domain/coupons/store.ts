import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { CouponRow, NewCoupon } from './types.js';

/** Coupons' SQL: the deployment's coupons (admin), never changed nor deleted — invoices name them. */
export const COUPON_COLUMNS = (c = 'coupons') =>
  `${c}.id, ${c}.name, ${c}.percent_off::text AS percent_off, ${c}.amount_off::text AS amount_off, ${c}.currency, ${c}.currency_options, ${c}.duration,
   ${c}.duration_in_periods, ${c}.max_redemptions, ${c}.times_redeemed, ${c}.expires_at, ${c}.created_at`;
export const couponNotFound = (id: string) => new NotFoundError(`No coupon ${id}.`);

export async function insertCoupon(pool: PgPool, c: NewCoupon): Promise<CouponRow> {
  const { rows } = await pool.query<CouponRow>(
    `INSERT INTO coupons (id, name, percent_off, amount_off, currency, duration, duration_in_periods, max_redemptions, expires_at, currency_options)
     VALUES ($1, $2, $3::numeric, $4::numeric, $5, $6, $7, $8, $9, $10::jsonb) RETURNING ${COUPON_COLUMNS()}`,
    [
      newId('coupon'),
      c.name,
      c.percent_off,
      c.amount_off,
      c.currency,
      c.duration,
      c.duration_in_periods,
      c.max_redemptions,
      c.expires_at,
      JSON.stringify(c.currency_options),
    ],
  );
  return rows[0]!;
}

export async function listCoupons(pool: PgPool, window: RowWindow): Promise<{ rows: CouponRow[]; total: number }> {
  return selectPage<CouponRow>(
    pool,
    { columns: COUPON_COLUMNS(), from: 'coupons', where: 'true', params: [], orderBy: 'created_at DESC, id DESC' },
    window,
  );
}

export async function getCoupon(q: PgPool | PgClient, id: string): Promise<CouponRow> {
  if (!hasPrefix(id, 'coupon')) throw couponNotFound(id);
  const coupon = await findCoupon(q, id);
  if (!coupon) throw couponNotFound(id);
  return coupon;
}

/** The coupon, or undefined when there is none with that id. */
export async function findCoupon(q: PgPool | PgClient, id: string): Promise<CouponRow | undefined> {
  const { rows } = await q.query<CouponRow>(`SELECT ${COUPON_COLUMNS()} FROM coupons WHERE id = $1`, [id]);
  return rows[0];
}
