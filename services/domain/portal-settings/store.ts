import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';

/** Portal settings' SQL (the rule and the defaults are settings.ts): the deployment's one row of what the operator set. */

type Queryable = Pick<PgPool, 'query'> | PgClient;

/** The stored object (only the keys the operator set) and when it last changed. */
export interface StoredPortalSettings<S> {
  settings: S;
  updated_at: Date;
}

/** The deployment's row, or undefined when the operator never set anything. */
export async function portalSettingsRow<S>(q: Queryable): Promise<StoredPortalSettings<S> | undefined> {
  const r = await q.query<StoredPortalSettings<S>>('SELECT settings, updated_at FROM portal_settings WHERE id');
  return r.rows[0];
}

/** Merges `change` over the stored keys in one statement (the others keep their value); returns the row. */
export async function mergePortalSettings<S>(q: Queryable, change: S): Promise<StoredPortalSettings<S>> {
  const r = await q.query<StoredPortalSettings<S>>(
    `INSERT INTO portal_settings (id, settings, updated_at) VALUES (true, $1::jsonb, now())
     ON CONFLICT (id) DO UPDATE SET settings = portal_settings.settings || EXCLUDED.settings, updated_at = now()
     RETURNING settings, updated_at`,
    [JSON.stringify(change)],
  );
  return r.rows[0]!;
}
