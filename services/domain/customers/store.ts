import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { newId, hasPrefix } from '../../../shared/ids.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import type { BillingAddress } from '../billing-info/types.js';
import type { CustomerRegistryWriter } from './registry-writer.js';
import { setCustomerCurrency } from './currency-store.js';
import type { CustomerChange, CustomerRow, LegalDetails, NewCustomer } from './types.js';

/**
 * Customers' SQL. A customer is an account (docs/design.md §6): these functions read and write `accounts`
 * (and its billing address); every write also rewrites the customer's registry shard before COMMIT
 * (CustomerRegistryWriter), so a customer the API answered for is known to every ingress.
 */
const notFound = (id: string) => new NotFoundError(`No customer ${id}.`);

const COLUMNS = `a.id AS account_id, a.customer_id, a.external_id, a.name, a.email, a.metadata, a.created_at,
    ba.line1, ba.city, ba.state, ba.zip, a.legal_name, a.address, a.tax_ids, a.tax_exempt, a.net_terms_days, a.locale, a.currency`;
const SELECT = `SELECT ${COLUMNS}
  FROM accounts a LEFT JOIN billing_addresses ba ON ba.account_id = a.id`;

/** A duplicate external id → 409 `conflict` naming the field; anything else passes through. */
function externalIdTaken(err: unknown, externalId: string | null | undefined): never {
  if ((err as { code?: string; constraint?: string }).code === '23505' && externalId) {
    throw new ConflictError(`A customer with external_id ${JSON.stringify(externalId)} already exists.`, 'conflict', [
      { field: 'external_id', message: 'is already used by another customer' },
    ]);
  }
  throw err;
}

/** The account row of a new customer (the CLI's `accounts create` makes one the same way), in `c`'s transaction. */
export async function insertAccount(
  c: PgClient,
  a: { name: string; externalId: string | null; email: string | null; metadata: Record<string, string> },
): Promise<{ account_id: string; customer_id: string }> {
  const ids = { account_id: newId('acct'), customer_id: newId('cus') };
  await c.query(
    'INSERT INTO accounts (id, customer_id, name, external_id, email, metadata) VALUES ($1, $2, $3, $4, $5, $6)',
    [ids.account_id, ids.customer_id, a.name, a.externalId, a.email, JSON.stringify(a.metadata)],
  );
  return ids;
}

async function putAddress(c: PgClient, accountId: string, a: BillingAddress | null): Promise<void> {
  if (a === null) {
    await c.query('DELETE FROM billing_addresses WHERE account_id = $1', [accountId]);
    return;
  }
  await c.query(
    `INSERT INTO billing_addresses (account_id, line1, city, state, zip) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (account_id) DO UPDATE
       SET line1 = EXCLUDED.line1, city = EXCLUDED.city, state = EXCLUDED.state, zip = EXCLUDED.zip, updated_at = now()`,
    [accountId, a.line1, a.city, a.state, a.zip],
  );
}

/** Writes the legal details given (absent: unchanged). */
async function putLegal(c: PgClient, accountId: string, l: LegalDetails): Promise<void> {
  if (Object.values(l).every((v) => v === undefined)) return;
  await c.query(
    `UPDATE accounts SET
       legal_name = CASE WHEN $2 THEN $3 ELSE legal_name END,
       address = CASE WHEN $4 THEN $5::jsonb ELSE address END,
       tax_ids = COALESCE($6::jsonb, tax_ids),
       tax_exempt = COALESCE($7, tax_exempt),
       net_terms_days = COALESCE($8, net_terms_days),
       locale = COALESCE($9, locale),
       updated_at = now()
     WHERE id = $1`,
    [
      accountId,
      l.legalName !== undefined,
      l.legalName ?? null,
      l.address !== undefined,
      l.address ? JSON.stringify(l.address) : null,
      l.taxIds === undefined ? null : JSON.stringify(l.taxIds),
      l.taxExempt ?? null,
      l.netTermsDays ?? null,
      l.locale ?? null,
    ],
  );
}

async function selectCustomer(db: PgClient | PgPool, customerId: string): Promise<CustomerRow | undefined> {
  const { rows } = await db.query<CustomerRow>(`${SELECT} WHERE a.customer_id = $1`, [customerId]);
  return rows[0];
}

export async function insertCustomer(
  pool: PgPool,
  registry: CustomerRegistryWriter,
  c: NewCustomer,
): Promise<CustomerRow> {
  try {
    return await withTransaction(pool, async (client) => {
      const ids = await insertAccount(client, c);
      if (c.billingAddress) await putAddress(client, ids.account_id, c.billingAddress);
      await putLegal(client, ids.account_id, c.legal);
      if (c.currency) await setCustomerCurrency(client, ids.account_id, c.currency);
      await registry.write(client, ids.account_id);
      return (await selectCustomer(client, ids.customer_id))!;
    });
  } catch (err) {
    externalIdTaken(err, c.externalId);
  }
}

export async function listCustomers(
  pool: PgPool,
  q: { externalId?: string },
  window: RowWindow,
): Promise<{ rows: CustomerRow[]; total: number }> {
  return selectPage<CustomerRow>(
    pool,
    {
      columns: COLUMNS,
      from: 'accounts a LEFT JOIN billing_addresses ba ON ba.account_id = a.id',
      where: '($1::text IS NULL OR a.external_id = $1)',
      params: [q.externalId ?? null],
      orderBy: 'a.created_at DESC, a.id DESC',
    },
    window,
  );
}

export async function getCustomer(pool: PgPool, customerId: string): Promise<CustomerRow> {
  if (!hasPrefix(customerId, 'cus')) throw notFound(customerId);
  const row = await selectCustomer(pool, customerId);
  if (!row) throw notFound(customerId);
  return row;
}

export async function updateCustomer(
  pool: PgPool,
  registry: CustomerRegistryWriter,
  customerId: string,
  change: CustomerChange,
): Promise<CustomerRow> {
  if (!hasPrefix(customerId, 'cus')) throw notFound(customerId);
  try {
    return await withTransaction(pool, async (c) => {
      const { rows } = await c.query<{ id: string }>(
        `UPDATE accounts SET
           name = COALESCE($2, name),
           external_id = CASE WHEN $3 THEN $4 ELSE external_id END,
           email = CASE WHEN $5 THEN $6 ELSE email END,
           metadata = COALESCE($7::jsonb, metadata),
           updated_at = now()
         WHERE customer_id = $1 RETURNING id`,
        [
          customerId,
          change.name ?? null,
          change.externalId !== undefined,
          change.externalId ?? null,
          change.email !== undefined,
          change.email ?? null,
          change.metadata === undefined ? null : JSON.stringify(change.metadata),
        ],
      );
      const accountId = rows[0]?.id;
      if (!accountId) throw notFound(customerId);
      if (change.billingAddress !== undefined) await putAddress(c, accountId, change.billingAddress);
      await putLegal(c, accountId, change.legal);
      if (change.currency) await setCustomerCurrency(c, accountId, change.currency);
      if (change.externalId !== undefined) await registry.write(c, accountId);
      return (await selectCustomer(c, customerId))!;
    });
  } catch (err) {
    externalIdTaken(err, change.externalId);
  }
}

/** The account a `cus_` id names (operator reads and writes `?customer_id=`), or NotFoundError. */
export async function accountOfCustomer(db: PgPool | PgClient, customerId: string): Promise<string> {
  const account = await findAccountOfCustomer(db, customerId);
  if (!account) throw notFound(customerId);
  return account;
}

/** The account of a customer id, or undefined when no customer has it (a malformed id included). */
export async function findAccountOfCustomer(db: PgPool | PgClient, customerId: string): Promise<string | undefined> {
  if (!hasPrefix(customerId, 'cus')) return undefined;
  const { rows } = await db.query<{ id: string }>('SELECT id FROM accounts WHERE customer_id = $1', [customerId]);
  return rows[0]?.id;
}

/** The customer id (cus_…) of each of these accounts: what the API names a resource's customer by. */
export async function customerIdsOfAccounts(
  db: PgPool | PgClient,
  accountIds: readonly string[],
): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; customer_id: string }>(
    'SELECT id, customer_id FROM accounts WHERE id = ANY($1::text[])',
    [[...new Set(accountIds)]],
  );
  return new Map(rows.map((r) => [r.id, r.customer_id]));
}

/** The accounts of customers with these external ids (those that exist). */
export async function accountsOfExternalIds(pool: PgPool, externalIds: readonly string[]): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM accounts WHERE external_id = ANY($1::text[])', [
    externalIds,
  ]);
  return rows.map((r) => r.id);
}

/** account id → its customer's names, for these accounts: an operator's group_by=customer read, event payloads. */
export async function externalIdsOf(
  pool: PgPool,
  accountIds: readonly string[],
): Promise<Map<string, { customer_id: string; external_id: string | null }>> {
  const { rows } = await pool.query<{ id: string; customer_id: string; external_id: string | null }>(
    'SELECT id, customer_id, external_id FROM accounts WHERE id = ANY($1::text[])',
    [accountIds],
  );
  return new Map(rows.map((r) => [r.id, { customer_id: r.customer_id, external_id: r.external_id }]));
}
