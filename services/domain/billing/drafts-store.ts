import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { PricedLine } from '../pricing/invoice-lines.js';
import { TAX_PROFILE_COLUMNS } from '../tax/invoice-tax.js';
import type { TaxProfile } from '../tax/types.js';
import { inScope, type BillingScope } from './scope.js';

/** SQL of the drafts (drafts.ts): due and single drafts locked, their operators' one-off lines. */

/** A draft as finalization needs it, locked; with its customer's tax profile and terms as they are now. */
export interface DraftRow extends TaxProfile {
  net_terms_days: number;
  id: string;
  account_id: string;
  customer_id: string;
  subscription_id: string;
  currency: string;
  period_start: Date;
  /** The period's end: the day after its last day, 00:00 UTC. */
  period_end: Date;
  canceled_at: Date | null;
}

const DRAFT_COLUMNS = `i.id, i.account_id, i.customer_id, i.subscription_id, i.currency,
  (i.period_start::timestamp AT TIME ZONE 'UTC') AS period_start, ((i.period_end + 1)::timestamp AT TIME ZONE 'UTC') AS period_end, s.canceled_at, ${TAX_PROFILE_COLUMNS('a')}`;
/** A draft, its subscription and its customer's account (tax profile, terms); locks take the invoice row only. */
const DRAFT_FROM = 'invoices i JOIN subscriptions s ON s.id = i.subscription_id JOIN accounts a ON a.id = i.account_id';

/** Locks up to `limit` drafts of the scope whose period ended `graceSeconds` or more before `now`, oldest first. */
export async function lockDueDrafts(
  client: PgClient,
  q: { now: Date; graceSeconds: number; limit: number; scope: BillingScope },
): Promise<DraftRow[]> {
  // period_end is the last day: the period ends the day after, at 00:00 UTC.
  const r = await client.query<DraftRow>(
    `SELECT ${DRAFT_COLUMNS} FROM ${DRAFT_FROM}
      WHERE i.status = 'draft' AND ((i.period_end + 1)::timestamp AT TIME ZONE 'UTC') + make_interval(secs => $2) <= $1
        AND ${inScope('i.account_id', '$4')}
      ORDER BY i.period_start, i.account_id, i.id LIMIT $3 FOR UPDATE OF i SKIP LOCKED`,
    [q.now, q.graceSeconds, q.limit, q.scope.clockId],
  );
  return r.rows;
}

/** When the scope's first draft is due: its period's end + `graceSeconds`; null when it has none. */
export async function firstDraftDue(
  pg: Pick<PgPool, 'query'>,
  graceSeconds: number,
  scope: BillingScope,
): Promise<Date | null> {
  const r = await pg.query<{ at: Date | null }>(
    `SELECT min(((i.period_end + 1)::timestamp AT TIME ZONE 'UTC') + make_interval(secs => $1)) AS at
       FROM invoices i WHERE i.status = 'draft' AND ${inScope('i.account_id', '$2')}`,
    [graceSeconds, scope.clockId],
  );
  return r.rows[0]?.at ?? null;
}

/** Locks one invoice of the deployment as a draft row, with its status (undefined: no such invoice). */
export async function lockInvoiceAsDraft(
  client: PgClient,
  id: string,
): Promise<(DraftRow & { status: string }) | undefined> {
  const r = await client.query<DraftRow & { status: string }>(
    `SELECT ${DRAFT_COLUMNS}, i.status FROM ${DRAFT_FROM}
      WHERE i.id = $1 FOR UPDATE OF i`,
    [id],
  );
  return r.rows[0];
}

/** Appends a `one_off` line to a draft and adds its amount to the draft's amount and subtotal. */
export async function appendOneOffLine(
  client: PgClient,
  id: string,
  line: { description: string; quantity: string; unit_price: string; amount: string },
): Promise<void> {
  await client.query(
    `INSERT INTO invoice_lines (invoice_id, position, product_id, meter_id, description, quantity, unit_price, amount, type)
     SELECT $1, COALESCE(max(position) + 1, 0), NULL, NULL, $2, $3::numeric, $4::numeric, $5::numeric, 'one_off'
       FROM invoice_lines WHERE invoice_id = $1`,
    [id, line.description, line.quantity, line.unit_price, line.amount],
  );
  await client.query(
    `UPDATE invoices SET amount = amount + $2::numeric, subtotal = subtotal + $2::numeric WHERE id = $1`,
    [id, line.amount],
  );
}

/** The operators' one-off lines of these drafts, in printed order. */
export async function oneOffLinesOf(client: PgClient, ids: string[]): Promise<Map<string, PricedLine[]>> {
  const out = new Map<string, PricedLine[]>(ids.map((id) => [id, []]));
  const r = await client.query<{ invoice_id: string } & PricedLine>(
    `SELECT invoice_id, type, product_id, meter_id, description, quantity::text AS quantity, unit_price::text AS unit_price,
            amount::text AS amount, NULL AS price_model, NULL AS adjusts_invoice_id
       FROM invoice_lines WHERE invoice_id = ANY($1) AND type = 'one_off' ORDER BY invoice_id, position`,
    [ids],
  );
  for (const { invoice_id, ...line } of r.rows) out.get(invoice_id)!.push(line);
  return out;
}
