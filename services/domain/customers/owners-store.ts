import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';

/**
 * What a customer owns and a route names by id, and the table holding it (each has `id` and `account_id`): the
 * one list the actor's scope (acting-for.ts) looks owners up in.
 */
const OWNED_TABLES = {
  invoice: 'invoices',
  subscription: 'subscriptions',
  credit_note: 'credit_notes',
  payment_method: 'payment_methods',
  credit_grant: 'credit_grants',
  credit_top_up: 'credit_top_ups',
  meter: 'meters',
} as const;

export type OwnedKind = keyof typeof OWNED_TABLES;

/** The account owning the `kind` of that id; undefined when there is none. */
export async function ownerAccountOf(db: PgPool | PgClient, kind: OwnedKind, id: string): Promise<string | undefined> {
  const r = await db.query<{ account_id: string }>(`SELECT account_id FROM ${OWNED_TABLES[kind]} WHERE id = $1`, [id]);
  return r.rows[0]?.account_id;
}
