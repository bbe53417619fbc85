import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from './clients/nats.js';
import type { Logger } from './logging.js';
import { withTimeout } from './service.js';

export interface KvMirrorOptions {
  /** For logs and health (`revocations`, `meter registry`). */
  name: string;
  /** Applies one entry of the bucket to the caller's in-memory copy (replays must be harmless). */
  apply(entry: KvWatchEntry): void;
  /** How long the copy may go unconfirmed before it counts as unknown (`fresh` false). */
  maxStalenessMs: number;
  /** How often the bucket's last sequence is compared with what the watch delivered. */
  probeMs?: number;
  log?: Logger;
}

/**
 * A NATS KV bucket replicated into memory by a watch — and known to be current. A nats.js watch whose
 * bucket or consumer is gone neither ends nor errors: it just goes quiet, so a copy that merely "has a
 * watch" can be silently stale (a revoked token would stay valid). Every `probeMs` the mirror asks for the
 * bucket's last sequence: at or below what the watch delivered → confirmed current; behind for two probes →
 * the watch is re-opened; NATS unreachable → not confirmed. `fresh` turns false once nothing confirmed the
 * copy for `maxStalenessMs`, and true again when a (re-opened) watch has caught up: callers fail closed on it.
 */
export class KvMirror {
  private kv: KV | undefined;
  private watcher: Awaited<ReturnType<KV['watch']>> | undefined;
  /** Highest stream sequence the watch delivered (or the bucket's last one when a snapshot completed). */
  private seen = 0;
  /** Since when the copy is in doubt (a probe failed, or the watch stayed behind); undefined while confirmed. */
  private doubtSince: number | undefined;
  private behindSince: number | undefined;
  private stopped = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing = false;
  private reopening: Promise<void> | undefined;
  private fresh_ = false;
  private readonly probeMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly bucket: string,
    private readonly opts: KvMirrorOptions,
  ) {
    this.probeMs = opts.probeMs ?? 1_000;
  }

  /** Resolves once the bucket's current content is in memory (rejects after `timeoutMs`). */
  async start(timeoutMs = 30_000): Promise<void> {
    // Probing starts first: if this first load fails or hangs, the probes keep re-opening the watch.
    this.probeTimer = setInterval(() => void this.probe(), this.probeMs);
    this.probeTimer.unref();
    this.reopening = withTimeout(this.open(), timeoutMs, `${this.opts.name}: bucket ${this.bucket} load`).finally(
      () => (this.reopening = undefined),
    );
    await this.reopening;
  }

  /**
   * Loaded, and not in doubt for longer than `maxStalenessMs`. Doubt starts when a probe fails (NATS
   * unreachable or the bucket gone: from the probe's start) or finds the watch behind — a probe that is
   * merely slow on a busy server casts none.
   */
  get fresh(): boolean {
    return this.fresh_ && (this.doubtSince === undefined || Date.now() - this.doubtSince <= this.opts.maxStalenessMs);
  }

  health(): { ok: boolean; detail?: string } {
    if (this.fresh) return { ok: true };
    const since = this.doubtSince === undefined ? '' : ` for ${Math.round((Date.now() - this.doubtSince) / 1000)} s`;
    return { ok: false, detail: `${this.opts.name} watch not confirmed current${since}; re-establishing` };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.probeTimer);
    this.watcher?.stop();
    await this.reopening?.catch(() => undefined);
  }

  /** Opens the bucket and a watch from its beginning; resolves when the snapshot is applied. */
  private async open(): Promise<void> {
    const kv = await new Kvm(this.nc).open(this.bucket);
    const status = await kv.status();
    const snapshotSeq = status.streamInfo.state.last_seq;
    const watcher = await kv.watch();
    this.kv = kv;
    this.watcher?.stop();
    this.watcher = watcher;
    this.seen = 0; // sequences of this watch's stream (a re-created bucket starts again at 1)
    let markSynced!: () => void;
    const synced = new Promise<void>((resolve) => (markSynced = resolve));
    if (status.values === 0) markSynced();
    void (async () => {
      try {
        for await (const e of watcher) {
          if (this.watcher !== watcher) break; // replaced by a re-opened watch: its entries only
          this.opts.apply(e);
          if (e.revision > this.seen) this.seen = e.revision;
          // The last entry of the initial snapshot is the first one flagged as an update.
          if (e.isUpdate || e.delta === 0) markSynced();
        }
      } catch (err) {
        this.opts.log?.warn({ err: (err as Error).message, bucket: this.bucket }, `${this.opts.name} watch failed`);
      }
    })();
    await synced;
    // Everything up to the sequence read before the watch began is in (a purged last message included).
    if (snapshotSeq > this.seen) this.seen = snapshotSeq;
    this.confirm();
  }

  private confirm(): void {
    this.doubtSince = undefined;
    this.behindSince = undefined;
    if (!this.fresh_) {
      if (this.seen > 0 || this.kv) this.opts.log?.info({ bucket: this.bucket }, `${this.opts.name} watch current`);
      this.fresh_ = true;
    }
  }

  private async probe(): Promise<void> {
    // While a watch is being opened its snapshot is still arriving (a large bucket takes seconds): behind by design.
    if (this.probing || this.stopped || this.reopening) return;
    this.probing = true;
    const started = Date.now();
    try {
      if (!this.kv) throw new Error('bucket not opened yet');
      const last = (await this.kv.status()).streamInfo.state.last_seq;
      if (this.seen >= last) return this.confirm();
      this.behindSince ??= started;
      if (started - this.behindSince < 2 * this.probeMs) return;
      this.doubtSince ??= this.behindSince;
      this.opts.log?.warn(
        { bucket: this.bucket, seen: this.seen, last },
        `${this.opts.name} watch is behind the bucket; re-opening it`,
      );
    } catch (err) {
      this.doubtSince ??= started;
      this.opts.log?.warn(
        { err: (err as Error).message, bucket: this.bucket },
        `${this.opts.name}: cannot confirm the watch is current`,
      );
    } finally {
      this.probing = false;
    }
    if (!this.fresh) this.fresh_ = false;
    this.reopen();
  }

  private reopen(): void {
    if (this.reopening || this.stopped) return;
    this.reopening = withTimeout(
      this.open(),
      Math.max(this.opts.maxStalenessMs, 5_000),
      `${this.opts.name}: re-opening ${this.bucket}`,
    )
      .catch((err) =>
        this.opts.log?.warn(
          { err: (err as Error).message, bucket: this.bucket },
          `${this.opts.name}: re-opening the watch failed; retrying`,
        ),
      )
      .finally(() => (this.reopening = undefined));
  }
}
