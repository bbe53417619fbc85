import type { KV } from '@nats-io/kv';
import type { PgPool } from '../../../shared/clients/postgres.js';
import type { Logger } from '../../../shared/logging.js';
import { publishRevocations, type Revocation } from '../../../shared/auth/revocations.js';
import {
  deleteAccessTokens,
  expiredPublishedRevocations,
  markRevocationsPublished,
  purgeExpiredOAuthRows,
  unpublishedRevocations,
} from '../../domain/oauth/tokens-store.js';
import type { RevocationSink } from './context.js';

const BATCH = 1000;

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
      await markRevocationsPublished(
        this.pg,
        entries.map((e) => e.jti),
      );
    } catch (err) {
      this.log.error({ err, count: entries.length }, 'revocation not yet replicated; housekeeping will retry');
    }
  }

  /** One pass; safe to run from several processes at once. */
  async housekeeping(): Promise<{ published: number; purged: number }> {
    const entries = await unpublishedRevocations(this.pg, BATCH);
    if (entries.length) {
      await publishRevocations(this.kv, entries);
      await markRevocationsPublished(
        this.pg,
        entries.map((e) => e.jti),
      );
    }
    const expired = await expiredPublishedRevocations(this.pg, BATCH);
    if (expired.length) {
      for (const jti of expired) await this.kv.purge(jti);
      // Drop the purge markers too (the KV implementation has it, the KV type does not): the bucket holds only live revocations.
      await (this.kv as KV & { purgeDeletes(olderMillis?: number): Promise<unknown> }).purgeDeletes(0);
      await deleteAccessTokens(this.pg, expired);
    }
    await purgeExpiredOAuthRows(this.pg);
    return { published: entries.length, purged: expired.length };
  }
}
