import type { PgPool } from '../../../shared/clients/postgres.js';
import type { ExportKind } from '../../../shared/vocabulary.js';
import { PRINTED_NUMBER_SQL } from '../invoices/numbering.js';
import type { JournalDocument } from './journal.js';

/**
 * The SQL of the Postgres export kinds (docs/exports.md): each read in pages of a stable order with a keyset
 * (never OFFSET), so a month of invoices streams through in bounded memory and a re-run reads the same rows in
 * the same order. Every kind covers the whole deployment: only the operator (admin) exports.
 */
export type PgKind = Exclude<ExportKind, 'usage' | 'journal_entries'>;

/** A page's rows and the keyset value after its last row (null: it was the last page). */
export interface Page<R> {
  rows: R[];
  after: unknown[] | null;
}

interface KindSql {
  /** SELECT list (named as the export's columns) + `_k0`, `_k1`, … : the keyset, in order. */
  select: string;
  from: string;
  /** The window condition over $1 (from) and $2 (to). */
  window: string;
  keys: string[];
}

const NUMBER = PRINTED_NUMBER_SQL;

const KINDS: Record<PgKind, KindSql> = {
  invoices: {
    select: `i.id AS invoice_id, ${NUMBER('i')} AS number, i.customer_id,
      i.subscription_id, i.status, i.reason, i.currency, coalesce(i.subtotal, i.amount)::text AS subtotal,
      i.tax::text AS tax, i.amount::text AS amount, i.amount_credited::text AS amount_credited,
      i.period_start::text AS period_start, i.period_end::text AS period_end, i.created_at,
      coalesce(i.due_at, i.created_at) AS due_at, i.paid_at`,
    from: 'invoices i',
    window: `i.status <> 'draft' AND i.created_at >= $1 AND i.created_at < $2`,
    keys: ['i.created_at', 'i.id'],
  },
  invoice_lines: {
    select: `l.invoice_id, l.position::bigint AS position, i.customer_id, l.type, l.product_id, l.meter_id,
      l.description, l.quantity::text AS quantity, l.unit_price::text AS unit_price, l.amount::text AS amount,
      i.currency, l.tax_rate_id, i.created_at AS invoice_created_at`,
    from: 'invoice_lines l JOIN invoices i ON i.id = l.invoice_id',
    window: `i.status <> 'draft' AND i.created_at >= $1 AND i.created_at < $2`,
    keys: ['i.created_at', 'l.invoice_id', 'l.position'],
  },
  // What an attempt charged: the invoice's amount less its `credit` notes (a credit note of type credit is only
  // ever given on an unpaid invoice, so all of them came before the charge; refunds come after).
  payments: {
    select: `p.invoice_id, p.attempt::bigint AS attempt, i.customer_id, p.status,
      (i.amount - coalesce((SELECT sum(cn.amount) FROM credit_notes cn WHERE cn.invoice_id = i.id AND cn.type = 'credit'), 0))::text AS amount,
      i.currency, p.charge_id, p.failure_code, p.manual::text AS manual, p.created_at, p.completed_at`,
    from: 'payment_attempts p JOIN invoices i ON i.id = p.invoice_id',
    window: `p.completed_at >= $1 AND p.completed_at < $2`,
    keys: ['p.completed_at', 'p.invoice_id', 'p.attempt'],
  },
  credit_notes: {
    select: `cn.id AS credit_note_id, ${NUMBER('cn')} AS number, cn.invoice_id,
      a.customer_id, cn.type, cn.currency, cn.amount::text AS amount, cn.tax::text AS tax, cn.reason,
      cn.refund_status, cn.refund_id, cn.created_at`,
    from: 'credit_notes cn JOIN accounts a ON a.id = cn.account_id',
    window: `cn.created_at >= $1 AND cn.created_at < $2`,
    keys: ['cn.created_at', 'cn.id'],
  },
  customers: {
    select: `a.customer_id, a.id AS account_id, a.name, a.email, a.external_id, a.legal_name,
      a.address->>'country' AS country, a.tax_exempt, a.net_terms_days::bigint AS net_terms_days, a.created_at,
      a.updated_at`,
    from: 'accounts a',
    window: `a.created_at >= $1 AND a.created_at < $2`,
    keys: ['a.created_at', 'a.id'],
  },
};

/** One page of a kind's rows in the window, after the keyset `after` (null: from the start). */
export async function readPgPage(
  pool: PgPool,
  kind: PgKind,
  from: Date,
  to: Date,
  after: unknown[] | null,
  limit: number,
): Promise<Page<Record<string, unknown>>> {
  const k = KINDS[kind];
  const keyCols = k.keys.map((key, i) => `${key} AS _k${i}`).join(', ');
  const params: unknown[] = [from, to];
  let seek = '';
  if (after) {
    seek = ` AND (${k.keys.join(', ')}) > (${after.map((_, i) => `$${i + 3}`).join(', ')})`;
    params.push(...after);
  }
  params.push(limit);
  const { rows } = await pool.query(
    `SELECT ${k.select}, ${keyCols} FROM ${k.from} WHERE ${k.window}${seek}
      ORDER BY ${k.keys.join(', ')} LIMIT $${params.length}`,
    params,
  );
  const last = rows.at(-1);
  return { rows, after: rows.length < limit || !last ? null : k.keys.map((_, i) => last[`_k${i}`]) };
}

/** One page of the journal's documents of one type in the window (docs/exports.md "Journal entries"). */
export async function readJournalPage(
  pool: PgPool,
  type: JournalDocument['type'],
  from: Date,
  to: Date,
  after: unknown[] | null,
  limit: number,
): Promise<Page<JournalDocument>> {
  const q = JOURNAL_SQL[type];
  const params: unknown[] = [from, to];
  let seek = '';
  if (after) {
    seek = ` AND (${q.keys.join(', ')}) > ($3, $4)`;
    params.push(...after);
  }
  params.push(limit);
  const { rows } = await pool.query(
    `SELECT ${q.select}, ${q.keys.map((key, i) => `${key} AS _k${i}`).join(', ')} FROM ${q.from}
      WHERE ${q.window}${seek} ORDER BY ${q.keys.join(', ')} LIMIT $${params.length}`,
    params,
  );
  const docs = rows.map(
    (r) =>
      ({
        type,
        id: r.id,
        number: r.number ?? null,
        customerId: r.customer_id,
        currency: r.currency,
        amount: r.amount,
        tax: r.tax ?? '0',
        creditApplied: r.credit_applied ?? '0',
        at: r.at,
      }) as JournalDocument,
  );
  const last = rows.at(-1);
  return { rows: docs, after: rows.length < limit || !last ? null : [last._k0, last._k1] };
}

const JOURNAL_SQL: Record<JournalDocument['type'], { select: string; from: string; window: string; keys: string[] }> = {
  invoice: {
    select: `i.id, ${NUMBER('i')} AS number, i.customer_id, i.currency,
      i.amount::text AS amount, i.tax::text AS tax, i.created_at AS at,
      (-coalesce((SELECT sum(l.amount) FROM invoice_lines l WHERE l.invoice_id = i.id AND l.type = 'credit'), 0))::text AS credit_applied`,
    from: 'invoices i',
    window: `i.status <> 'draft' AND i.created_at >= $1 AND i.created_at < $2`,
    keys: ['i.created_at', 'i.id'],
  },
  payment: {
    select: `p.invoice_id || ':' || p.attempt AS id, i.customer_id, i.currency, p.completed_at AS at,
      (i.amount - coalesce((SELECT sum(cn.amount) FROM credit_notes cn WHERE cn.invoice_id = i.id AND cn.type = 'credit'), 0))::text AS amount`,
    from: 'payment_attempts p JOIN invoices i ON i.id = p.invoice_id',
    window: `p.status = 'succeeded' AND p.completed_at >= $1 AND p.completed_at < $2`,
    keys: ['p.completed_at', "p.invoice_id || ':' || p.attempt"],
  },
  credit_note: {
    select: `cn.id, ${NUMBER('cn')} AS number, a.customer_id, cn.currency,
      cn.amount::text AS amount, cn.tax::text AS tax, cn.created_at AS at`,
    from: 'credit_notes cn JOIN accounts a ON a.id = cn.account_id',
    window: `cn.created_at >= $1 AND cn.created_at < $2`,
    keys: ['cn.created_at', 'cn.id'],
  },
  refund: {
    select: `cn.id, ${NUMBER('cn')} AS number, a.customer_id, cn.currency,
      cn.amount::text AS amount, cn.created_at AS at`,
    from: 'credit_notes cn JOIN accounts a ON a.id = cn.account_id',
    window: `cn.refund_status = 'succeeded' AND cn.created_at >= $1 AND cn.created_at < $2`,
    keys: ['cn.created_at', 'cn.id'],
  },
};

/** The customer ids (cus_…) of accounts, for the usage export's rows (ClickHouse knows only account ids). */
export async function customerIdsOf(pool: PgPool, accountIds: string[]): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; customer_id: string }>(
    'SELECT id, customer_id FROM accounts WHERE id = ANY($1)',
    [accountIds],
  );
  return new Map(rows.map((r) => [r.id, r.customer_id]));
}
