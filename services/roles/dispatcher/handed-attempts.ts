import type { ClaimedAttempt } from '../../domain/webhooks/delivery-store.js';

/** A first attempt the fan-out inserted leased to this process, with when that lease ends (real time, ms). */
export interface HandedAttempt {
  attempt: ClaimedAttempt;
  leaseEndsAt: number;
}

/**
 * First attempts handed from the fan-out to the sender of the same process (issue 45): the fan-out inserts them
 * already leased, so they are sent from memory, without a claim (a query and a row write fewer per delivery). The
 * queue is bounded, overall and per webhook, so that what it holds is sent well within its lease; what does not fit
 * is inserted unleased and claimed as before. An attempt whose lease is about to end before it could be sent is
 * dropped from the queue unsent: once the lease is over any dispatcher claims it, and a lease is never extended, so
 * two processes never send one attempt.
 */
export class HandedAttempts {
  private queue: HandedAttempt[] = [];
  private readonly perWebhook = new Map<string, number>();

  constructor(
    private readonly limits: {
      /** Attempts held at most. */
      max: number;
      /** Attempts of one webhook held at most (a slow webhook drains slowly: its surplus stays in Postgres). */
      maxPerWebhook: number;
      /** An attempt is sent only when at least this long of its lease is left (the request timeout and a margin). */
      minLeaseLeftMs: number;
    },
  ) {}

  get size(): number {
    return this.queue.length;
  }

  /** Which of these rows (by webhook, in order) may be leased and handed over now: each true one takes a place. */
  plan(webhookIds: string[]): boolean[] {
    let room = this.limits.max - this.queue.length;
    const taken = new Map<string, number>();
    return webhookIds.map((w) => {
      const n = (this.perWebhook.get(w) ?? 0) + (taken.get(w) ?? 0);
      if (room <= 0 || n >= this.limits.maxPerWebhook) return false;
      room--;
      taken.set(w, (taken.get(w) ?? 0) + 1);
      return true;
    });
  }

  add(handed: HandedAttempt[]): void {
    for (const h of handed) {
      this.queue.push(h);
      this.perWebhook.set(h.attempt.webhook_id, (this.perWebhook.get(h.attempt.webhook_id) ?? 0) + 1);
    }
  }

  /**
   * Up to `limit` attempts to send now, oldest first, none of a webhook beyond `roomOf(webhook)` (its free
   * concurrency); `expired` gets those whose lease is too short to send them.
   */
  take(
    limit: number,
    roomOf: (webhookId: string) => number,
    now: number,
  ): { send: ClaimedAttempt[]; expired: ClaimedAttempt[] } {
    const send: ClaimedAttempt[] = [];
    const expired: ClaimedAttempt[] = [];
    const kept: HandedAttempt[] = [];
    const taken = new Map<string, number>();
    for (const h of this.queue) {
      const w = h.attempt.webhook_id;
      if (h.leaseEndsAt - now < this.limits.minLeaseLeftMs) {
        expired.push(h.attempt);
        this.forget(w);
      } else if (send.length < limit && (taken.get(w) ?? 0) < roomOf(w)) {
        send.push(h.attempt);
        taken.set(w, (taken.get(w) ?? 0) + 1);
        this.forget(w);
      } else kept.push(h);
    }
    this.queue = kept;
    return { send, expired };
  }

  /** Everything still held (a stopping dispatcher gives the leases back). */
  drain(): ClaimedAttempt[] {
    const all = this.queue.map((h) => h.attempt);
    this.queue = [];
    this.perWebhook.clear();
    return all;
  }

  private forget(webhookId: string): void {
    const n = (this.perWebhook.get(webhookId) ?? 1) - 1;
    if (n <= 0) this.perWebhook.delete(webhookId);
    else this.perWebhook.set(webhookId, n);
  }
}
