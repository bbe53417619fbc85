import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { ConflictError, NotFoundError, ValidationError } from '../../../shared/errors.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { NewPromotionCode, PromotionCodeRow } from './types.js';

/** Promotion codes' SQL (docs/checkout.md): the deployment's (admin); a code is never deleted, only deactivated. */
const COLUMNS = `id, coupon_id, code, max_redemptions, times_redeemed, expires_at, first_time_only, active, created_at`;
const notFound = (id: string) => new NotFoundError(`No promotion code ${id}.`);

export async function insertPromotionCode(pool: PgPool, p: NewPromotionCode): Promise<PromotionCodeRow> {
  try {
    const { rows } = await pool.query<PromotionCodeRow>(
      `INSERT INTO promotion_codes (id, coupon_id, code, max_redemptions, expires_at, first_time_only)
       SELECT $1, c.id, $3, $4, $5, $6 FROM coupons c WHERE c.id = $2 RETURNING ${COLUMNS}`,
      [newId('promo'), p.coupon_id, p.code, p.max_redemptions, p.expires_at, p.first_time_only],
    );
    if (!rows[0]) throw new ValidationError([{ field: 'coupon_id', message: `no coupon ${p.coupon_id}` }]);
    return rows[0];
  } catch (err) {
    if ((err as { code?: string }).code === '23505')
      throw new ConflictError(
        `The code ${p.code} is taken (codes are unique in the deployment, whatever their case).`,
        'promotion_code_taken',
        [{ field: 'code', message: 'taken' }],
      );
    throw err;
  }
}

export async function listPromotionCodes(
  pool: PgPool,
  q: { couponId?: string; code?: string },
  window: RowWindow,
): Promise<{ rows: PromotionCodeRow[]; total: number }> {
  return selectPage<PromotionCodeRow>(
    pool,
    {
      columns: COLUMNS,
      from: 'promotion_codes',
      where: `($1::text IS NULL OR coupon_id = $1) AND ($2::text IS NULL OR lower(code) = lower($2))
`,
      params: [q.couponId ?? null, q.code ?? null],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
}

export async function getPromotionCode(q: PgPool | PgClient, id: string): Promise<PromotionCodeRow> {
  if (!hasPrefix(id, 'promo')) throw notFound(id);
  const { rows } = await q.query<PromotionCodeRow>(`SELECT ${COLUMNS} FROM promotion_codes WHERE id = $1`, [id]);
  if (!rows[0]) throw notFound(id);
  return rows[0];
}

/** Deactivating: no redemption from now on (those made stay). Deactivating an inactive code changes nothing. */
export async function deactivatePromotionCode(pool: PgPool, id: string): Promise<PromotionCodeRow> {
  if (!hasPrefix(id, 'promo')) throw notFound(id);
  const { rows } = await pool.query<PromotionCodeRow>(
    `UPDATE promotion_codes SET active = false WHERE id = $1 RETURNING ${COLUMNS}`,
    [id],
  );
  if (!rows[0]) throw notFound(id);
  return rows[0];
}

/** The code a customer typed, whatever its case, or null. */
export async function findPromotionCodeByCode(q: PgPool | PgClient, code: string): Promise<PromotionCodeRow | null> {
  const { rows } = await q.query<PromotionCodeRow>(
    `SELECT ${COLUMNS} FROM promotion_codes WHERE lower(code) = lower($1)`,
    [code],
  );
  return rows[0] ?? null;
}

/**
 * Takes one redemption if one is left, in one statement: a concurrent redemption of the last slot waits for this
 * row's lock and then finds it full. Whether it was taken.
 */
export async function takePromotionCodeRedemption(client: PgClient, id: string): Promise<boolean> {
  const r = await client.query(
    `UPDATE promotion_codes SET times_redeemed = times_redeemed + 1
      WHERE id = $1 AND active AND (max_redemptions IS NULL OR times_redeemed < max_redemptions)`,
    [id],
  );
  return r.rowCount === 1;
}

/** Whether the account was ever invoiced (a `first_time_only` code is for customers who never were). */
export async function accountHasInvoices(q: PgPool | PgClient, accountId: string): Promise<boolean> {
  const { rows } = await q.query(`SELECT 1 FROM invoices WHERE account_id = $1 LIMIT 1`, [accountId]);
  return rows.length > 0;
}
