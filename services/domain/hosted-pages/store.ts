import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import { newId } from '../../../shared/ids.js';

/** SQL of the hosted page links (infra/migrations/postgres/712_hosted_pages.sql). */

export interface InvoiceLinkState {
  generation: number;
  revoked: boolean;
}

const FRESH: InvoiceLinkState = { generation: 0, revoked: false };

/** Each invoice's link generation and whether it is revoked (no row: generation 0, live). */
export async function invoiceLinkStates(
  db: PgPool | PgClient,
  invoiceIds: readonly string[],
): Promise<Map<string, InvoiceLinkState>> {
  const out = new Map<string, InvoiceLinkState>(invoiceIds.map((id) => [id, FRESH]));
  if (invoiceIds.length === 0) return out;
  const r = await db.query<{ invoice_id: string; generation: number; revoked: boolean }>(
    'SELECT invoice_id, generation, revoked_at IS NOT NULL AS revoked FROM hosted_invoice_links WHERE invoice_id = ANY($1)',
    [invoiceIds],
  );
  for (const row of r.rows) out.set(row.invoice_id, { generation: row.generation, revoked: row.revoked });
  return out;
}

/** Rotate: the next generation, live again (every earlier link stops working). Revoke: the link stops working. */
export async function changeInvoiceLink(
  db: PgPool | PgClient,
  invoiceId: string,
  change: 'rotate' | 'revoke',
  now: Date,
): Promise<InvoiceLinkState> {
  const r = await db.query<{ generation: number; revoked: boolean }>(
    change === 'rotate'
      ? `INSERT INTO hosted_invoice_links (invoice_id, generation, revoked_at, updated_at) VALUES ($1, 1, NULL, $2)
         ON CONFLICT (invoice_id) DO UPDATE SET generation = hosted_invoice_links.generation + 1, revoked_at = NULL, updated_at = $2
         RETURNING generation, revoked_at IS NOT NULL AS revoked`
      : `INSERT INTO hosted_invoice_links (invoice_id, generation, revoked_at, updated_at) VALUES ($1, 0, $2, $2)
         ON CONFLICT (invoice_id) DO UPDATE SET revoked_at = COALESCE(hosted_invoice_links.revoked_at, $2), updated_at = $2
         RETURNING generation, revoked_at IS NOT NULL AS revoked`,
    [invoiceId, now],
  );
  return r.rows[0]!;
}

/** A new card page link of the account; its earlier ones are revoked in the same transaction. */
export async function insertCardLink(
  pg: PgPool,
  accountId: string,
  hash: Buffer,
  now: Date,
  expiresAt: Date,
): Promise<{ id: string }> {
  return withTransaction(pg, async (c) => {
    await c.query('UPDATE hosted_card_links SET revoked_at = $2 WHERE account_id = $1 AND revoked_at IS NULL', [
      accountId,
      now,
    ]);
    const id = newId('hcl');
    await c.query(
      'INSERT INTO hosted_card_links (id, account_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
      [id, accountId, hash, now, expiresAt],
    );
    return { id };
  });
}

export async function findCardLink(
  db: PgPool | PgClient,
  hash: Buffer,
): Promise<{ account_id: string; expires_at: Date; revoked: boolean } | null> {
  const r = await db.query<{ account_id: string; expires_at: Date; revoked: boolean }>(
    'SELECT account_id, expires_at, revoked_at IS NOT NULL AS revoked FROM hosted_card_links WHERE token_hash = $1',
    [hash],
  );
  return r.rows[0] ?? null;
}
