import type { PgClient } from '../../../shared/clients/postgres.js';

/**
 * Document numbers' SQL (the rule is numbering.ts): the deployment's one counter row and the numbers written on
 * invoices and credit notes. Both run in the caller's finalizing transaction; the counter's row lock is held until
 * its commit.
 */

/** Moves the counter on by `count`; returns its new last number (as text: a bigint). */
export async function advanceDocumentCounter(client: PgClient, count: number): Promise<string> {
  const r = await client.query<{ last: string }>(
    `UPDATE document_numbers SET last = last + $1 WHERE series = 'documents' RETURNING last::text`,
    [count],
  );
  return r.rows[0]!.last;
}

/** Writes each row's number and printed prefix (`ids[i]` gets `numbers[i]` and `prefixes[i]`). */
export async function writeDocumentNumbers(
  client: PgClient,
  table: 'invoices' | 'credit_notes',
  ids: string[],
  numbers: string[],
  prefixes: string[],
): Promise<void> {
  await client.query(
    `UPDATE ${table} t SET number = u.number, number_prefix = u.prefix
       FROM unnest($1::text[], $2::bigint[], $3::text[]) AS u(id, number, prefix) WHERE t.id = u.id`,
    [ids, numbers, prefixes],
  );
}
