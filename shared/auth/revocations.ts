import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '../clients/nats.js';
import type { Logger } from '../logging.js';
import type { RevocationList } from './access-tokens.js';
import { KvMirror } from '../kv-mirror.js';
import { UnavailableError } from '../errors.js';

/** A revoked access token: its id and when it expires anyway (unix seconds). */
export interface Revocation {
  jti: string;
  exp: number;
}

/** Value stored under key `jti` in the revocations bucket. */
interface RevocationValue {
  exp: number;
}

const PRUNE_INTERVAL_MS = 60_000;
const INITIAL_SYNC_TIMEOUT_MS = 10_000;

export async function openRevocationBucket(nc: NatsConnection, bucket: string): Promise<KV> {
  return new Kvm(nc).open(bucket);
}

/** Writes revocations to the NATS KV bucket every api process watches. Idempotent. */
export async function publishRevocations(kv: KV, entries: readonly Revocation[]): Promise<void> {
  await Promise.all(entries.map((e) => kv.put(e.jti, JSON.stringify({ exp: e.exp } satisfies RevocationValue))));
}

/**
 * The revocation list as every api process sees it: the NATS KV revocations bucket (key = jti)
 * replicated into a Map by a watch, so checking a token costs one lookup and no I/O. Entries are
 * dropped from memory once the token has expired (verification rejects it on `exp` alone by then);
 * the control plane purges them from the bucket (services/control/oauth/housekeeping.ts).
 */
export class KvRevocationList implements RevocationList {
  private readonly revoked = new Map<string, number>();
  private mirror: KvMirror | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;

  private constructor(private readonly log?: Logger) {}

  /**
   * Opens the watch and resolves once the bucket's current content is in memory (or INITIAL_SYNC_TIMEOUT_MS
   * passed: then every check answers 503 until it is). `maxStalenessMs`: how long the list may go unconfirmed
   * (the watch lost) before checks fail closed (WATCH_MAX_STALENESS_SECONDS).
   */
  static async start(
    nc: NatsConnection,
    bucket: string,
    log?: Logger,
    maxStalenessMs = 10_000,
  ): Promise<KvRevocationList> {
    const list = new KvRevocationList(log);
    list.mirror = new KvMirror(nc, bucket, { name: 'revocations', apply: (e) => list.apply(e), maxStalenessMs, log });
    await list.mirror
      .start(INITIAL_SYNC_TIMEOUT_MS)
      .catch((err) =>
        log?.error({ err: (err as Error).message }, 'revocation list not loaded; tokens are refused (503) until it is'),
      );
    list.pruneTimer = setInterval(() => list.prune(), PRUNE_INTERVAL_MS);
    list.pruneTimer.unref();
    return list;
  }

  /** Whether the token was revoked; 503 when the list can't be known current (fail closed, never open). */
  isRevoked(jti: string): boolean {
    if (!this.mirror?.fresh)
      throw new UnavailableError('Token revocations cannot be confirmed right now; retry shortly.', 2);
    return this.revoked.has(jti);
  }

  health(): { ok: boolean; detail?: string } {
    return this.mirror?.health() ?? { ok: false, detail: 'revocation list not started' };
  }

  get size(): number {
    return this.revoked.size;
  }

  /** Forgets entries whose token has expired. */
  prune(nowSeconds = Date.now() / 1000): void {
    for (const [jti, exp] of this.revoked) if (exp <= nowSeconds) this.revoked.delete(jti);
  }

  stop(): void {
    clearInterval(this.pruneTimer);
    void this.mirror?.stop();
  }

  private apply(entry: KvWatchEntry): void {
    if (entry.operation !== 'PUT') {
      this.revoked.delete(entry.key);
      return;
    }
    let exp = Number.POSITIVE_INFINITY;
    try {
      const value = entry.json<RevocationValue>();
      if (typeof value.exp === 'number') exp = value.exp;
    } catch {
      // A value we cannot read still revokes: failing closed is the safe side.
      this.log?.warn({ key: entry.key }, 'unreadable revocation entry');
    }
    if (exp > Date.now() / 1000) this.revoked.set(entry.key, exp);
  }
}
