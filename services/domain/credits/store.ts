import { withTransaction, type PgClient, type PgPool } from '../../../shared/clients/postgres.js';
import { appendEvents } from '../events/outbox-store.js';
import { creditGranted } from './events.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { NotFoundError, ValidationError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';

import type { CreditGrantRow, NewCreditGrant } from './types.js';

const CREDIT_GRANT_COLUMNS =
  'id, account_id, amount::text AS amount, remaining::text AS remaining, currency, expires_at, description, created_at';

const notFound = (id: string) => new NotFoundError(`No credit grant ${id}.`);

/**
 * Grants credit to an account; an unknown account is a field error (the operator named it in the body), and so is
 * a currency other than the customer's once it has one (price books: its invoices are all in it, so credit in
 * another currency would never be spent).
 */
export async function insertCreditGrant(pool: PgPool, g: NewCreditGrant): Promise<CreditGrantRow> {
  return withTransaction(pool, async (client) => {
    const row = await insertGrantRow(client, g);
    await appendEvents(client, [creditGranted(row, 'operator')]);
    return row;
  });
}

async function insertGrantRow(client: PgClient, g: NewCreditGrant): Promise<CreditGrantRow> {
  const r = await client.query<CreditGrantRow & { customer_currency: string | null }>(
    `WITH a AS (SELECT id, currency FROM accounts WHERE id = $2 OR customer_id = $7),
          made AS (
            INSERT INTO credit_grants (id, account_id, currency, amount, remaining, expires_at, description)
            SELECT $1, a.id, $3, $4::numeric, $4::numeric, $5, $6 FROM a WHERE a.currency IS NULL OR a.currency = $3
            RETURNING ${CREDIT_GRANT_COLUMNS})
     SELECT made.*, a.currency AS customer_currency FROM a LEFT JOIN made ON true`,
    [newId('cred'), g.accountId ?? null, g.currency, g.amount, g.expiresAt, g.description, g.customerId ?? null],
  );
  const row = r.rows[0];
  if (!row)
    throw new ValidationError([
      g.customerId !== undefined
        ? { field: 'customer_id', message: 'no such customer' }
        : { field: 'account_id', message: 'no such account' },
    ]);
  const { customer_currency, ...grant } = row;
  if (!grant.id)
    throw new ValidationError([
      { field: 'currency', message: `must be the customer's currency ${customer_currency} (its invoices are in it)` },
    ]);
  return grant;
}

/** The account's grants, newest first (ties by id), and its spendable balance per currency. */
export async function listCreditGrants(
  pool: PgPool,
  accountId: string,
  window: RowWindow,
  now: Date,
): Promise<{ rows: CreditGrantRow[]; total: number; balance: { currency: string; amount: string }[] }> {
  const [page, balance] = await Promise.all([
    selectPage<CreditGrantRow>(
      pool,
      {
        columns: CREDIT_GRANT_COLUMNS,
        from: 'credit_grants',
        where: 'account_id = $1',
        params: [accountId],
        orderBy: 'created_at DESC, id DESC',
      },
      window,
    ),
    pool.query<{ currency: string; amount: string }>(
      `SELECT currency, sum(remaining)::text AS amount FROM credit_grants
        WHERE account_id = $1 AND remaining > 0 AND (expires_at IS NULL OR expires_at > $2) GROUP BY currency ORDER BY currency`,
      [accountId, now],
    ),
  ]);
  return { ...page, balance: balance.rows };
}

/** One grant of the account; another account's grant is "not found" like an unknown id. */
export async function getCreditGrant(pool: PgPool, accountId: string, id: string): Promise<CreditGrantRow> {
  if (!hasPrefix(id, 'cred')) throw notFound(id);
  const r = await pool.query<CreditGrantRow>(
    `SELECT ${CREDIT_GRANT_COLUMNS} FROM credit_grants WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  if (!r.rows[0]) throw notFound(id);
  return r.rows[0];
}
