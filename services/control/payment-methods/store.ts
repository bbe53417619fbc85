import { reserveQuota } from '../../../shared/limits/quota.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import type { ChargeablePaymentMethod } from '../payments/processor.js';
import type { RowWindow } from '../../../shared/http/pagination.js';
import type { PaymentMethod } from './schemas.js';

/** Payment methods in Postgres. Every query is scoped to the account: another account's id is "not found". */

interface Row {
  id: string;
  type: 'card';
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  is_default: boolean;
  created_at: Date;
}

const COLUMNS = 'id, type, brand, last4, exp_month, exp_year, is_default, created_at';

function toApi(r: Row): PaymentMethod {
  return {
    id: r.id,
    type: r.type,
    card: { brand: r.brand, last4: r.last4, exp_month: r.exp_month, exp_year: r.exp_year },
    is_default: r.is_default,
    created_at: r.created_at.toISOString(),
  };
}

export interface NewCard {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  processor: string;
  processorToken: string;
}

/** Serialises changes to one account's payment methods (first-card default, default switches). */
async function lockAccount(c: PgClient, accountId: string): Promise<boolean> {
  const r = await c.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  return r.rowCount === 1;
}

/** Inserts a verified card; it becomes the default when the account has none. Null if the account is gone. */
export async function insertPaymentMethod(pg: PgPool, accountId: string, card: NewCard, maxPaymentMethods: number): Promise<PaymentMethod | null> {
  return withTransaction(pg, async (c) => {
    if (!(await reserveQuota(c, 'payment_methods', accountId, maxPaymentMethods))) return null;
    const r = await c.query<Row>(
      `INSERT INTO payment_methods (id, account_id, type, brand, last4, exp_month, exp_year, fingerprint, processor, processor_token, is_default)
       VALUES ($1, $2, 'card', $3, $4, $5, $6, $7, $8, $9,
               NOT EXISTS (SELECT 1 FROM payment_methods WHERE account_id = $2 AND is_default))
       RETURNING ${COLUMNS}`,
      [newId('pm'), accountId, card.brand, card.last4, card.exp_month, card.exp_year, card.fingerprint, card.processor, card.processorToken],
    );
    return toApi(r.rows[0]!);
  });
}

export async function listPaymentMethods(pg: PgPool, accountId: string, window: RowWindow): Promise<{ data: PaymentMethod[]; total: number }> {
  const { rows, total } = await selectPage<Row>(pg, { columns: COLUMNS, from: 'payment_methods', where: 'account_id = $1', params: [accountId], orderBy: 'seq DESC' }, window);
  return { data: rows.map(toApi), total };
}

export async function getPaymentMethod(pg: PgPool, accountId: string, id: string): Promise<PaymentMethod | null> {
  const r = await pg.query<Row>(`SELECT ${COLUMNS} FROM payment_methods WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return r.rows[0] ? toApi(r.rows[0]) : null;
}

/** Makes `id` the account's only default. Null when the account has no such payment method. */
export async function setDefaultPaymentMethod(pg: PgPool, accountId: string, id: string): Promise<PaymentMethod | null> {
  return withTransaction(pg, async (c) => {
    if (!(await lockAccount(c, accountId))) return null;
    const exists = await c.query('SELECT 1 FROM payment_methods WHERE account_id = $1 AND id = $2', [accountId, id]);
    if (exists.rowCount !== 1) return null;
    // Two statements: the partial unique index is checked row by row, so clear first, then set.
    await c.query('UPDATE payment_methods SET is_default = false WHERE account_id = $1 AND is_default AND id <> $2', [accountId, id]);
    const r = await c.query<Row>(`UPDATE payment_methods SET is_default = true WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [accountId, id]);
    return toApi(r.rows[0]!);
  });
}

/** For billing: the account's default payment method with what the processor needs to charge it. */
export async function defaultChargeablePaymentMethod(
  db: PgPool | PgClient,
  accountId: string,
): Promise<(ChargeablePaymentMethod & { processor: string; brand: string; last4: string }) | null> {
  const r = await db.query<ChargeablePaymentMethod & { processor: string; brand: string; last4: string }>(
    'SELECT id, processor, processor_token, brand, last4 FROM payment_methods WHERE account_id = $1 AND is_default',
    [accountId],
  );
  return r.rows[0] ?? null;
}
