import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage } from '../../../shared/clients/postgres.js';
import { hasPrefix, newId } from '../../../shared/ids.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { TAX_PROFILE_COLUMNS } from './invoice-tax.js';
import type { NewTaxRate, TaxProfile, TaxRateRow } from './types.js';

/** Tax rates' SQL: the deployment's rates (admin), never deleted — archived rates no longer tax new invoices. */
const COLUMNS = 'id, name, percentage::text AS percentage, country, region, inclusive, archived_at, created_at';
const notFound = (id: string) => new NotFoundError(`No tax rate ${id}.`);

export async function insertTaxRate(pool: PgPool, r: NewTaxRate): Promise<TaxRateRow> {
  const { rows } = await pool.query<TaxRateRow>(
    `INSERT INTO tax_rates (id, name, percentage, country, region, inclusive) VALUES ($1, $2, $3::numeric, $4, $5, $6)
     RETURNING ${COLUMNS}`,
    [newId('txr'), r.name, r.percentage, r.country, r.region, r.inclusive],
  );
  return rows[0]!;
}

export async function listTaxRates(
  pool: PgPool,
  q: { archived: boolean },
  window: RowWindow,
): Promise<{ rows: TaxRateRow[]; total: number }> {
  return selectPage<TaxRateRow>(
    pool,
    {
      columns: COLUMNS,
      from: 'tax_rates',
      where: '(archived_at IS NOT NULL) = $1',
      params: [q.archived],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
}

export async function getTaxRate(pool: PgPool, id: string): Promise<TaxRateRow> {
  if (!hasPrefix(id, 'txr')) throw notFound(id);
  const { rows } = await pool.query<TaxRateRow>(`SELECT ${COLUMNS} FROM tax_rates WHERE id = $1`, [id]);
  if (!rows[0]) throw notFound(id);
  return rows[0];
}

/** Archives a rate (again: no change): products naming it and customers of its country are no longer taxed at it. */
export async function archiveTaxRate(pool: PgPool, id: string): Promise<TaxRateRow> {
  if (!hasPrefix(id, 'txr')) throw notFound(id);
  const { rows } = await pool.query<TaxRateRow>(
    `UPDATE tax_rates SET archived_at = COALESCE(archived_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`,
    [id],
  );
  if (!rows[0]) throw notFound(id);
  return rows[0];
}

/** The ids among `ids` that name no active rate (a product may only name active rates). */
export async function unknownTaxRates(db: PgPool | PgClient, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM tax_rates WHERE id = ANY($1::text[]) AND archived_at IS NULL',
    [ids],
  );
  const known = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !known.has(id));
}

/** The active rates, by id (a deployment has a handful: read whole for each close batch). */
export async function activeTaxRates(db: PgPool | PgClient): Promise<Map<string, TaxRateRow>> {
  const { rows } = await db.query<TaxRateRow>(
    `SELECT ${COLUMNS} FROM tax_rates WHERE archived_at IS NULL ORDER BY created_at, id`,
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** These rates, archived ones included (a deduction carries the tax of an earlier invoice at its rates). */
export async function taxRatesByIds(db: PgPool | PgClient, ids: readonly string[]): Promise<Map<string, TaxRateRow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<TaxRateRow>(`SELECT ${COLUMNS} FROM tax_rates WHERE id = ANY($1::text[])`, [ids]);
  return new Map(rows.map((r) => [r.id, r]));
}

/** The rates each of these products names. */
export async function productTaxRateIds(
  db: PgPool | PgClient,
  productIds: readonly string[],
): Promise<Map<string, string[]>> {
  if (productIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; tax_rate_ids: string[] }>(
    'SELECT id, tax_rate_ids FROM products WHERE id = ANY($1::text[])',
    [productIds],
  );
  return new Map(rows.map((r) => [r.id, r.tax_rate_ids]));
}

/** An account's customer id and tax profile and terms, as an invoice of it takes them (tax/invoice-tax.ts). */
export async function customerTaxProfile(
  q: Pick<PgPool, 'query'>,
  accountId: string,
): Promise<(TaxProfile & { customer_id: string; net_terms_days: number }) | undefined> {
  const r = await q.query<TaxProfile & { customer_id: string; net_terms_days: number }>(
    `SELECT a.customer_id, ${TAX_PROFILE_COLUMNS('a')} FROM accounts a WHERE a.id = $1`,
    [accountId],
  );
  return r.rows[0];
}
