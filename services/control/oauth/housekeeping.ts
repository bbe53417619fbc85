import type { KV } from '@nats-io/kv';
import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import { publishRevocations, type Revocation } from '../../../shared/auth/revocations.js';
import type { RevocationSink } from './context.js';

const BATCH = 1000;
/** Codes are kept a day after expiry so a late replay still revokes what they issued. */
const KEEP_EXPIRED = "interval '1 day'";

/**
 * Postgres is the record of revoked access tokens; the NATS KV bucket is its replica that every api
 * process watches. This sink publishes at once and marks what got through; housekeeping retries the
 * rest (NATS down at revocation time), purges bucket entries of expired tokens (they fail on `exp`
 * anyway), and deletes expired codes, sessions and refresh tokens.
 */
export class RevocationReplicator implements RevocationSink {
  constructor(
    private readonly pg: PgPool,
    private readonly kv: KV,
    private readonly log: Logger,
  ) {}

  async publish(entries: readonly Revocation[]): Promise<void> {
    if (!entries.length) return;
    try {
      await publishRevocations(this.kv, entries);
      await this.pg.query('UPDATE oauth_access_tokens SET published_at = now() WHERE jti = ANY($1)', [
        entries.map((e) => e.jti),
      ]);
    } catch (err) {
      this.log.error({ err, count: entries.length }, 'revocation not yet replicated; housekeeping will retry');
    }
  }

  /** One pass; safe to run from several processes at once. */
  async housekeeping(): Promise<{ published: number; purged: number }> {
    const pending = await this.pg.query<{ jti: string; exp: number }>(
      `SELECT jti, extract(epoch FROM expires_at)::bigint AS exp FROM oauth_access_tokens
        WHERE revoked_at IS NOT NULL AND published_at IS NULL AND expires_at > now() LIMIT ${BATCH}`,
    );
    const entries = pending.rows.map((r) => ({ jti: r.jti, exp: Number(r.exp) }));
    if (entries.length) {
      await publishRevocations(this.kv, entries);
      await this.pg.query('UPDATE oauth_access_tokens SET published_at = now() WHERE jti = ANY($1)', [
        entries.map((e) => e.jti),
      ]);
    }
    const expired = await this.pg.query<{ jti: string }>(
      `SELECT jti FROM oauth_access_tokens WHERE published_at IS NOT NULL AND expires_at <= now() LIMIT ${BATCH}`,
    );
    if (expired.rows.length) {
      for (const { jti } of expired.rows) await this.kv.purge(jti);
      // Drop the purge markers too (the KV implementation has it, the KV type does not): the bucket holds only live revocations.
      await (this.kv as KV & { purgeDeletes(olderMillis?: number): Promise<unknown> }).purgeDeletes(0);
      await this.pg.query('DELETE FROM oauth_access_tokens WHERE jti = ANY($1)', [expired.rows.map((r) => r.jti)]);
    }
    await this.pg.query('DELETE FROM oauth_access_tokens WHERE published_at IS NULL AND expires_at <= now()');
    await this.pg.query(`DELETE FROM oauth_authorization_codes WHERE expires_at < now() - ${KEEP_EXPIRED}`);
    await this.pg.query('DELETE FROM oauth_sessions WHERE expires_at <= now()');
    await this.pg.query(`DELETE FROM oauth_refresh_tokens WHERE expires_at < now() - ${KEEP_EXPIRED}`);
    return { published: entries.length, purged: expired.rows.length };
  }
}
