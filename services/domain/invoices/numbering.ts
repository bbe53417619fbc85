import type { PgClient } from '../../../shared/clients/postgres.js';
import { advanceDocumentCounter, writeDocumentNumbers } from './numbering-store.js';

/**
 * Document numbers (docs/design.md §8 Invoice, infra/migrations/postgres/625_document_numbers.sql): one gapless
 * series per deployment for finalized invoices and credit notes. Numbers are taken from the counter row inside
 * the transaction that finalizes the documents, as its LAST statement: the row lock is held until commit, so
 * concurrent takers queue only for a commit, a rollback or a kill -9 hands the numbers back, and no number is
 * ever skipped or given twice.
 */
export interface DocumentNumber {
  /** The position in the series: 1, 2, 3 … */
  number: string;
  /** INVOICE_NUMBER_PREFIX with {YYYY} resolved at `now`, printed before the number. */
  prefix: string;
}

/** The prefix as printed for a document numbered at `now`: `ML-{YYYY}-` → `ML-2026-` (UTC year). */
export function resolvePrefix(template: string, now: Date): string {
  return template.replaceAll('{YYYY}', String(now.getUTCFullYear()));
}

/** `count` consecutive numbers of the series, in order; none when count is 0 (no lock taken). */
export async function takeNumbers(
  client: PgClient,
  count: number,
  prefixTemplate: string,
  now: Date,
): Promise<DocumentNumber[]> {
  if (count === 0) return [];
  const last = BigInt(await advanceDocumentCounter(client, count));
  const prefix = resolvePrefix(prefixTemplate, now);
  return Array.from({ length: count }, (_, i) => ({ number: String(last - BigInt(count - 1 - i)), prefix }));
}

/** The number as printed: prefix + at least six digits (ML-2026-000042; the series goes on past 999999). */
export const PRINTED_NUMBER_SQL = (table: string) =>
  `CASE WHEN ${table}.number IS NULL THEN NULL ELSE COALESCE(${table}.number_prefix, '') || lpad(${table}.number::text, 6, '0') END`;

/**
 * Numbers the given rows of `invoices` or `credit_notes`, in the given order, with the next numbers of the series.
 * Call it as the last statement of the transaction that finalizes them.
 */
export async function numberDocuments(
  client: PgClient,
  table: 'invoices' | 'credit_notes',
  ids: string[],
  prefixTemplate: string,
  now: Date,
): Promise<DocumentNumber[]> {
  const numbers = await takeNumbers(client, ids.length, prefixTemplate, now);
  if (numbers.length === 0) return numbers;
  await writeDocumentNumbers(
    client,
    table,
    ids,
    numbers.map((n) => n.number),
    numbers.map((n) => n.prefix),
  );
  return numbers;
}
