import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { selectPage, withTransaction } from '../../../shared/clients/postgres.js';
import { newId, hasPrefix } from '../../../shared/ids.js';
import { ConflictError, NotFoundError } from '../../../shared/errors.js';
import type { RowWindow } from '../../../shared/row-window.js';
import { ValidationError } from '../../../shared/errors.js';
import { unknownTaxRates } from '../tax/store.js';

import type { NewProduct, ProductChange, ProductRow } from './types.js';
import type { Pricing } from '../../../shared/vocabulary.js';
import type { ProductBooks, ProductCurrencyOptions } from '../pricing/price-books.js';

const PRODUCT_COLUMNS =
  'id, name, price::text AS price, currency, pricing, tiers_mode, tiers, package_size::text AS package_size, currency_options, tax_rate_ids, allow_customer_meters, created_at, updated_at';

const notFound = (id: string) => new NotFoundError(`No product ${id}.`);

export async function listProducts(pool: PgPool, window: RowWindow): Promise<{ rows: ProductRow[]; total: number }> {
  return selectPage<ProductRow>(
    pool,
    {
      columns: PRODUCT_COLUMNS,
      from: 'products',
      where: 'deleted_at IS NULL',
      params: [],
      orderBy: 'created_at DESC, id DESC',
    },
    window,
  );
}

export async function getProduct(pool: PgPool, id: string): Promise<ProductRow> {
  if (!hasPrefix(id, 'prod')) throw notFound(id);
  // Named: prepared once per connection (the hottest control-plane read).
  const r = await pool.query<ProductRow>({
    name: 'product-get',
    text: `SELECT ${PRODUCT_COLUMNS} FROM products WHERE id = $1 AND deleted_at IS NULL`,
    values: [id],
  });
  if (!r.rows[0]) throw notFound(id);
  return r.rows[0];
}

/** A product may only name active tax rates: 422 naming each unknown or archived one. */
async function checkTaxRates(pool: PgPool, ids: readonly string[] | undefined): Promise<void> {
  if (!ids?.length) return;
  const unknown = new Set(await unknownTaxRates(pool, ids));
  if (unknown.size === 0) return;
  throw new ValidationError(
    ids.flatMap((id, i) =>
      unknown.has(id) ? [{ field: `tax_rate_ids[${i}]`, message: 'no such active tax rate' }] : [],
    ),
  );
}

export async function insertProduct(pool: PgPool, p: NewProduct): Promise<ProductRow> {
  await checkTaxRates(pool, p.tax_rate_ids);
  const r = await pool.query<ProductRow>(
    `INSERT INTO products (id, name, price, currency, pricing, tiers_mode, tiers, package_size, tax_rate_ids, allow_customer_meters, currency_options)
     VALUES ($1, $2, $3::numeric, $4, $5, $6, $7::jsonb, $8::numeric, $9, $10, $11::jsonb) RETURNING ${PRODUCT_COLUMNS}`,
    [
      newId('prod'),
      p.name,
      p.price,
      p.currency,
      p.pricing,
      p.tiers_mode ?? null,
      p.tiers ? JSON.stringify(p.tiers) : null,
      p.package_size ?? null,
      p.tax_rate_ids ?? [],
      p.allow_customer_meters ?? true,
      JSON.stringify(p.currency_options ?? {}),
    ],
  );
  return r.rows[0]!;
}

export async function updateProduct(pool: PgPool, id: string, p: ProductChange): Promise<ProductRow> {
  if (!hasPrefix(id, 'prod')) throw notFound(id);
  await checkTaxRates(pool, p.tax_rate_ids);
  return withTransaction(pool, async (c) => {
    if (p.currency_options) await checkOptionsFit(c, id, p.currency_options);
    const r = await c.query<ProductRow>(
      `UPDATE products SET name = COALESCE($2, name), price = COALESCE($3::numeric, price),
              tax_rate_ids = COALESCE($4::text[], tax_rate_ids),
              allow_customer_meters = COALESCE($5::boolean, allow_customer_meters),
              currency_options = currency_options || COALESCE($6::jsonb, '{}'), updated_at = now()
        WHERE id = $1 AND deleted_at IS NULL RETURNING ${PRODUCT_COLUMNS}`,
      [
        id,
        p.name ?? null,
        p.price ?? null,
        p.tax_rate_ids ?? null,
        p.allow_customer_meters ?? null,
        p.currency_options ? JSON.stringify(p.currency_options) : null,
      ],
    );
    if (!r.rows[0]) throw notFound(id);
    return r.rows[0];
  });
}

/** A PATCH's price books fit the stored product: not its own currency, tiers exactly for a tiered product (locked). */
async function checkOptionsFit(c: PgClient, id: string, options: ProductCurrencyOptions): Promise<void> {
  const { rows } = await c.query<{ currency: string; pricing: Pricing }>(
    'SELECT currency, pricing FROM products WHERE id = $1 AND deleted_at IS NULL FOR UPDATE',
    [id],
  );
  const product = rows[0];
  if (!product) throw notFound(id);
  const errors = Object.entries(options).flatMap(([code, option]) => {
    const field = `currency_options.${code}`;
    if (code === product.currency) return [{ field, message: `is the product's own currency: PATCH price instead` }];
    if ((product.pricing === 'tiered') !== 'tiers' in option)
      return [
        product.pricing === 'tiered'
          ? { field: `${field}.tiers`, message: 'is required for tiered pricing' }
          : { field: `${field}.price`, message: `is required for ${product.pricing} pricing` },
      ];
    return [];
  });
  if (errors.length) throw new ValidationError(errors);
}

/**
 * Soft delete (past invoices and canceled subscriptions still name the product). The row lock orders this
 * against subscription writes, which take FOR SHARE on the products they reference: either the
 * subscription commits first and this sees it (409), or this commits first and the subscription finds no product.
 */
export async function deleteProduct(pool: PgPool, id: string): Promise<void> {
  if (!hasPrefix(id, 'prod')) throw notFound(id);
  await withTransaction(pool, async (c) => {
    const found = await c.query('SELECT 1 FROM products WHERE id = $1 AND deleted_at IS NULL FOR UPDATE', [id]);
    if (found.rowCount === 0) throw notFound(id);
    const used = await c.query(
      `SELECT s.id FROM subscription_items i JOIN subscriptions s ON s.id = i.subscription_id
        WHERE i.product_id = $1 AND i.effective_to IS NULL AND s.status = 'active' LIMIT 1`,
      [id],
    );
    if (used.rowCount) {
      throw new ConflictError(
        `Product ${id} is used by an active subscription (${used.rows[0].id}); cancel or change it first.`,
        'product_in_use',
      );
    }
    await c.query('UPDATE products SET deleted_at = now(), updated_at = now() WHERE id = $1', [id]);
  });
}

/**
 * The existing products among `ids` with what a subscription item checks, locked FOR SHARE in the caller's
 * transaction: a concurrent product DELETE waits, then sees the subscription that uses it.
 */
export async function lockProductsForShare(client: PgClient, ids: string[]): Promise<LockedProduct[]> {
  const { rows } = await client.query<LockedProduct>(
    `SELECT id, currency, currency_options, pricing, price::text AS price, tiers_mode, tiers, package_size::text AS package_size,
            allow_customer_meters
       FROM products WHERE id = ANY($1) AND deleted_at IS NULL ORDER BY id FOR SHARE`,
    [ids],
  );
  return rows;
}

/** What a subscription item checks of its product: its price books (pricing/price-books.ts) and customer meters. */
export interface LockedProduct extends ProductBooks {
  id: string;
  allow_customer_meters: boolean;
}
