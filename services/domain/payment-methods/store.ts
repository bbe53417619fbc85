import { reserveQuota } from '../../../shared/limits/quota.js';
import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';
import type { ChargeablePaymentMethod } from '../payments/processor.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { NewCard, PaymentMethodRow } from './types.js';

/** Payment methods in Postgres. Every query is scoped to the account: another account's id is "not found" (NotFoundError). */

const COLUMNS = 'id, type, brand, last4, exp_month, exp_year, is_default, created_at';
const notFound = () => new NotFoundError('No such payment method.');

/** Serialises changes to one account's payment methods (first-card default, default switches); `gone` when it no longer exists. */
async function lockAccount(c: PgClient, accountId: string, gone: () => NotFoundError): Promise<void> {
  const r = await c.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
  if (r.rowCount !== 1) throw gone();
}

/** Inserts a verified card; it becomes the default when the account has none. */
export async function insertPaymentMethod(
  pg: PgPool,
  accountId: string,
  card: NewCard,
  maxPaymentMethods: number,
): Promise<PaymentMethodRow> {
  return withTransaction(pg, async (c) => {
    await reserveQuota(c, 'payment_methods', accountId, maxPaymentMethods);
    const r = await c.query<PaymentMethodRow>(
      `INSERT INTO payment_methods (id, account_id, type, brand, last4, exp_month, exp_year, fingerprint, processor, processor_token, is_default)
       VALUES ($1, $2, 'card', $3, $4, $5, $6, $7, $8, $9,
               NOT EXISTS (SELECT 1 FROM payment_methods WHERE account_id = $2 AND is_default))
       RETURNING ${COLUMNS}`,
      [
        newId('pm'),
        accountId,
        card.brand,
        card.last4,
        card.exp_month,
        card.exp_year,
        card.fingerprint,
        card.processor,
        card.processorToken,
      ],
    );
    return r.rows[0]!;
  });
}

/** The account's payment methods, newest first. */
export async function listPaymentMethods(
  pg: PgPool,
  accountId: string,
  window: RowWindow,
): Promise<{ rows: PaymentMethodRow[]; total: number }> {
  return selectPage<PaymentMethodRow>(
    pg,
    { columns: COLUMNS, from: 'payment_methods', where: 'account_id = $1', params: [accountId], orderBy: 'seq DESC' },
    window,
  );
}

export async function getPaymentMethod(pg: PgPool, accountId: string, id: string): Promise<PaymentMethodRow> {
  const r = await pg.query<PaymentMethodRow>(
    `SELECT ${COLUMNS} FROM payment_methods WHERE account_id = $1 AND id = $2`,
    [accountId, id],
  );
  if (!r.rows[0]) throw notFound();
  return r.rows[0];
}

/** Makes `id` the account's only default. */
export async function setDefaultPaymentMethod(pg: PgPool, accountId: string, id: string): Promise<PaymentMethodRow> {
  return withTransaction(pg, async (c) => {
    await lockAccount(c, accountId, notFound);
    const exists = await c.query('SELECT 1 FROM payment_methods WHERE account_id = $1 AND id = $2', [accountId, id]);
    if (exists.rowCount !== 1) throw notFound();
    // Two statements: the partial unique index is checked row by row, so clear first, then set.
    await c.query('UPDATE payment_methods SET is_default = false WHERE account_id = $1 AND is_default AND id <> $2', [
      accountId,
      id,
    ]);
    const r = await c.query<PaymentMethodRow>(
      `UPDATE payment_methods SET is_default = true WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [accountId, id],
    );
    return r.rows[0]!;
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
