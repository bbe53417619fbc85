import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';

/** SQL of the customer portal's sessions (infra/migrations/postgres/810_portal_sessions.sql). */

type Queryable = PgPool | PgClient;

export interface PortalSessionRow {
  id: string;
  account_id: string;
  return_url: string;
  locale: string | null;
  expires_at: Date;
  opened_at: Date | null;
  session_expires_at: Date | null;
}

const COLUMNS = 'id, account_id, return_url, locale, expires_at, opened_at, session_expires_at';

export async function insertPortalSession(
  q: Queryable,
  s: {
    id: string;
    accountId: string;
    linkHash: Buffer;
    returnUrl: string;
    locale: string | null;
    now: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await q.query(
    `INSERT INTO portal_sessions (id, account_id, link_hash, return_url, locale, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [s.id, s.accountId, s.linkHash, s.returnUrl, s.locale, s.now, s.expiresAt],
  );
}

/**
 * Opens the session of a link that is unopened and unexpired, in one statement (two tabs opening the same link:
 * one wins); null when no such link — findByLink then tells why.
 */
export async function openPortalSession(
  q: Queryable,
  linkHash: Buffer,
  cookieHash: Buffer,
  now: Date,
  sessionExpiresAt: Date,
): Promise<PortalSessionRow | null> {
  const r = await q.query<PortalSessionRow>(
    `UPDATE portal_sessions SET opened_at = $3, cookie_hash = $2, session_expires_at = $4
      WHERE link_hash = $1 AND opened_at IS NULL AND expires_at > $3
      RETURNING ${COLUMNS}`,
    [linkHash, cookieHash, now, sessionExpiresAt],
  );
  return r.rows[0] ?? null;
}

export async function findPortalSessionByLink(q: Queryable, linkHash: Buffer): Promise<PortalSessionRow | null> {
  const r = await q.query<PortalSessionRow>(`SELECT ${COLUMNS} FROM portal_sessions WHERE link_hash = $1`, [linkHash]);
  return r.rows[0] ?? null;
}

/** The live session of a browser's cookie, or null (unknown or past its end). */
export async function findLivePortalSession(
  q: Queryable,
  cookieHash: Buffer,
  now: Date,
): Promise<PortalSessionRow | null> {
  const r = await q.query<PortalSessionRow>(
    `SELECT ${COLUMNS} FROM portal_sessions WHERE cookie_hash = $1 AND session_expires_at > $2`,
    [cookieHash, now],
  );
  return r.rows[0] ?? null;
}
