import type { PgPool } from '../../../shared/clients/postgres.js';
import type { User } from '../accounts/users-store.js';

/** Sign-in sessions of the OAuth pages (services/control/oauth/session.ts), stored by the hash of their cookie. */

/** The signed-in user of a live session, or null. */
export async function sessionUser(pg: PgPool, idHash: string): Promise<User | null> {
  const { rows } = await pg.query<{ id: string; account_id: string; email: string; is_operator: boolean }>(
    `SELECT u.id, u.account_id, u.email, u.is_operator FROM oauth_sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id_hash = $1 AND s.expires_at > now()`,
    [idHash],
  );
  const r = rows[0];
  return r ? { id: r.id, accountId: r.account_id, email: r.email, isOperator: r.is_operator } : null;
}

export async function insertSession(pg: PgPool, idHash: string, userId: string, ttlSeconds: number): Promise<void> {
  await pg.query(
    'INSERT INTO oauth_sessions (id_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))',
    [idHash, userId, ttlSeconds],
  );
}

export async function deleteSession(pg: PgPool, idHash: string): Promise<void> {
  await pg.query('DELETE FROM oauth_sessions WHERE id_hash = $1', [idHash]);
}
