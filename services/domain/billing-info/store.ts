import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { BillingAddress, BillingInfo } from './types.js';

const accountGone = () => new NotFoundError('The account no longer exists.');

interface Row {
  customer_id: string;
  line1: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  pm_id: string | null;
  pm_type: 'card' | null;
  last4: string | null;
  brand: string | null;
}

/** Billing info of one account. Also used for invoices. */
export async function getBillingInfo(db: PgPool | PgClient, accountId: string): Promise<BillingInfo> {
  const r = await db.query<Row>(
    `SELECT a.customer_id, ba.line1, ba.city, ba.state, ba.zip, pm.id AS pm_id, pm.type AS pm_type, pm.last4, pm.brand
       FROM accounts a
       LEFT JOIN billing_addresses ba ON ba.account_id = a.id
       LEFT JOIN payment_methods pm ON pm.account_id = a.id AND pm.is_default
      WHERE a.id = $1`,
    [accountId],
  );
  const row = r.rows[0];
  if (!row) throw accountGone();
  return {
    customer_id: row.customer_id,
    payment_method: row.pm_id ? { id: row.pm_id, type: row.pm_type!, last4: row.last4!, brand: row.brand! } : null,
    billing_address:
      row.line1 !== null ? { line1: row.line1, city: row.city!, state: row.state!, zip: row.zip! } : null,
  };
}

/** Replaces the address. */
export async function putBillingAddress(pg: PgPool, accountId: string, a: BillingAddress): Promise<void> {
  const r = await pg.query(
    `INSERT INTO billing_addresses (account_id, line1, city, state, zip)
     SELECT id, $2, $3, $4, $5 FROM accounts WHERE id = $1
     ON CONFLICT (account_id) DO UPDATE
       SET line1 = EXCLUDED.line1, city = EXCLUDED.city, state = EXCLUDED.state, zip = EXCLUDED.zip, updated_at = now()`,
    [accountId, a.line1, a.city, a.state, a.zip],
  );
  if (r.rowCount !== 1) throw accountGone();
}
