import type { Piscina } from 'piscina';
import type { Infra } from '../../../shared/infra.js';
import type { Component } from '../role.js';
import { createWebhookSignaturePool } from '../../workers/pool.js';
import type { SignatureRequest, SignatureResult } from '../../domain/webhooks/signing.js';
import { customerEvent } from '../../domain/events/payload.js';
import type { EventType } from '../../../shared/vocabulary.js';
import { unsealWebhookSecret, webhookSecretKey } from '../../domain/webhooks/secret.js';
import type { AddressLookup } from '../../domain/webhooks/url-safety.js';
import {
  claimDueAttempts,
  recordOutcomes,
  releaseAttempts,
  type AttemptOutcome,
  type ClaimedAttempt,
} from '../../domain/webhooks/delivery-store.js';
import { nextAttemptAt, RETRY_DELAYS_MS } from '../../domain/webhooks/retry-schedule.js';
import { WebhookSender, type SendResult } from './sender.js';
import { DeliveryPump } from './delivery-pump.js';
import { HandedAttempts } from './handed-attempts.js';

export interface DeliveryOptions {
  /** When attempts are due (tests move it forward instead of waiting minutes). Leases use real time. */
  clock: () => Date;
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  /** Requests in flight to one webhook from this process: a receiver that always times out holds only these. */
  perWebhookConcurrency: number;
  /** Requests in flight from this process. */
  globalConcurrency: number;
  /** Claimed attempts belong to this process this long (real time); must exceed timeoutMs. */
  leaseMs: number;
  /** Fallback poll for due retries and other processes' work. */
  pollIntervalMs: number;
  claimBatch: number;
  /** Name resolution for the SSRF check (tests inject names; default the system resolver). */
  lookup?: AddressLookup;
  /** Told which accounts had webhooks disabled by a 410 (their usage subscription may have ended). */
  onWebhooksDisabled?: (accountIds: string[]) => Promise<void>;
}

export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  clock: () => new Date(),
  retryDelaysMs: RETRY_DELAYS_MS,
  timeoutMs: 10_000,
  perWebhookConcurrency: 16,
  globalConcurrency: 512,
  leaseMs: 60_000,
  pollIntervalMs: 1_000,
  claimBatch: 256,
};

const SECRET_CACHE_MAX = 10_000;
/** First attempts held from the fan-out, per in-flight place and per webhook place: a second or so of sending. */
const HANDED_PER_PLACE = 4;
/** Lease left, beyond the request timeout, below which a handed attempt is left to a claim rather than sent. */
const HANDED_LEASE_MARGIN_MS = 15_000;
const OUTCOME_BATCH = 256;
const OUTCOME_FLUSH_MS = 20;

/**
 * Sends due webhook attempts (dispatcher role). Claims due rows from Postgres (delivery-store), signs the
 * whole batch in one piscina task, sends each request through the SSRF-checking sender with a per-webhook
 * and a global concurrency limit, and records outcomes in batches (next attempt scheduled in the same
 * transaction). Woken by the event fan-out for first attempts, by finished sends, and by a poll.
 */
export class WebhookDelivery implements Component {
  readonly name = 'webhook-delivery';
  private readonly opts: DeliveryOptions;
  private readonly secretKey: Buffer;
  private readonly secrets = new Map<string, string>();
  private pool: Piscina<SignatureRequest[], SignatureResult[]> | undefined;
  private sender: WebhookSender | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly pump: DeliveryPump;
  private inflight = 0;
  private readonly busy = new Map<string, number>();
  /** Attempts this process is sending or has not recorded yet: a claim that returns one again is skipped. */
  private readonly held = new Set<string>();
  private readonly sends = new Set<Promise<void>>();
  private readonly handed: HandedAttempts;
  private outcomes: AttemptOutcome[] = [];
  private flushing: Promise<void> | null = null;
  private readonly attempts;
  private readonly firstAttemptLag;
  private readonly requestSeconds;

  constructor(
    private readonly infra: Infra,
    opts: Partial<DeliveryOptions> = {},
  ) {
    this.opts = { ...DEFAULT_DELIVERY_OPTIONS, ...opts };
    this.pump = new DeliveryPump({
      name: 'webhook delivery',
      failure: 'claiming due deliveries failed',
      pollIntervalMs: this.opts.pollIntervalMs,
      log: infra.log,
      pass: () => this.pass(),
    });
    this.secretKey = webhookSecretKey(infra.config.SECRET_KEY);
    this.handed = new HandedAttempts({
      max: this.opts.globalConcurrency * HANDED_PER_PLACE,
      maxPerWebhook: this.opts.perWebhookConcurrency * HANDED_PER_PLACE,
      // A short lease (tests) leaves a short margin: what is not sent within it goes to a claim.
      minLeaseLeftMs:
        this.opts.timeoutMs + Math.min(HANDED_LEASE_MARGIN_MS, (this.opts.leaseMs - this.opts.timeoutMs) / 2),
    });
    const m = infra.metrics;
    this.attempts = m.counter(
      'meterline_webhook_attempts_total',
      'Webhook delivery attempts by outcome: succeeded (2xx within 10 s), failed (another status), error (no answer: timeout, connection refused or reset), refused (target not allowed by the SSRF rules), gone (410: the webhook is disabled)',
      ['outcome'],
    );
    this.firstAttemptLag = m.histogram(
      'meterline_webhook_first_attempt_lag_seconds',
      'Event creation to the start of its first attempt',
      [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 30],
    );
    this.requestSeconds = m.histogram(
      'meterline_webhook_request_seconds',
      'Webhook request duration',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    );
  }

  async start(): Promise<void> {
    this.pool = createWebhookSignaturePool({ maxQueue: 1_024 });
    this.sender = new WebhookSender({
      timeoutMs: this.opts.timeoutMs,
      allowPrivate: this.infra.config.WEBHOOKS_ALLOW_PRIVATE_URLS,
      lookup: this.opts.lookup,
    });
    this.pump.start();
  }

  async stop(): Promise<void> {
    if (!(await this.pump.stop())) return;
    // Requests in flight finish (bounded by the timeout) and are recorded; nothing more is claimed.
    while (this.sends.size) await Promise.allSettled([...this.sends]);
    await this.flush();
    // Handed attempts not sent: their leases are given back, so that another dispatcher sends them at once.
    const unsent = this.handed.drain();
    for (const a of unsent) this.held.delete(a.id);
    await releaseAttempts(
      this.infra.pg,
      unsent.map((a) => a.id),
    ).catch((err) => this.infra.log.warn({ err }, 'webhook delivery: giving back handed attempts failed'));
    clearTimeout(this.flushTimer);
    await this.pool?.destroy();
    this.sender?.close();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.pump.health();
  }

  /** Claims and sends what is due, unless a pass is running (then one more pass follows it). */
  wake(): void {
    this.pump.wake();
  }

  /** How long the fan-out leases the first attempts it hands over (./event-fanout.ts). */
  get leaseMs(): number {
    return this.opts.leaseMs;
  }

  /** Which of these first attempts (their webhooks, in order) the fan-out may lease to this process and hand over. */
  handOffPlan(webhookIds: string[]): boolean[] {
    return this.pump.isStopped ? webhookIds.map(() => false) : this.handed.plan(webhookIds);
  }

  /** First attempts the fan-out inserted leased to this process until `leaseEndsAt`: sent before anything is claimed. */
  handOver(attempts: ClaimedAttempt[], leaseEndsAt: number): void {
    for (const a of attempts) this.held.add(a.id);
    this.handed.add(attempts.map((attempt) => ({ attempt, leaseEndsAt })));
    this.wake();
  }

  /** One pass of the pump (./delivery-pump.ts): send handed attempts, claim due ones and send them, batch after batch. */
  private async pass(): Promise<void> {
    while (!this.pump.isStopped) {
      const limit = Math.min(this.opts.claimBatch, this.opts.globalConcurrency - this.inflight);
      if (limit <= 0) return;
      if (this.handed.size) {
        const { send, expired } = this.handed.take(
          limit,
          (webhookId) => this.opts.perWebhookConcurrency - (this.busy.get(webhookId) ?? 0),
          Date.now(),
        );
        // Left to a claim once their leases end: this process may claim them too, so they are no longer held.
        for (const a of expired) this.held.delete(a.id);
        if (send.length) {
          await this.deliver(send);
          continue;
        }
      }
      const claimed = await claimDueAttempts(this.infra.pg, {
        now: this.opts.clock(),
        limit,
        leaseMs: this.opts.leaseMs,
        perWebhook: this.opts.perWebhookConcurrency,
        busy: this.busy,
      });
      this.pump.clear();
      if (claimed.length === 0) return;
      // A lease of ours that ran out while its request or its write was slow: still ours, never sent twice.
      const fresh = claimed.filter((a) => !this.held.has(a.id));
      for (const a of fresh) this.held.add(a.id);
      await this.deliver(fresh);
      if (claimed.length < limit) return;
    }
  }

  private async deliver(claimed: ClaimedAttempt[]): Promise<void> {
    const sendable: { a: ClaimedAttempt; body: string; secrets: string[] }[] = [];
    const bodies = new Map<string, string>();
    const now = Date.now(); // the rotation set the expiry in real time
    for (const a of claimed) {
      if (a.webhook_status !== 'enabled')
        this.finish(
          a,
          { ok: false, status: null, error: 'webhook disabled; not sent', durationMs: 0, refused: false, gone: false },
          false,
        );
      else if (!a.event)
        this.finish(
          a,
          {
            ok: false,
            status: null,
            error: 'event no longer stored; not sent',
            durationMs: 0,
            refused: false,
            gone: false,
          },
          false,
        );
      else {
        const secrets = [this.unseal(a.secret_sealed)];
        // After a rotation the previous secret signs too (docs/design.md §9), until it expires.
        if (a.previous_secret_sealed && a.previous_secret_expires_at && a.previous_secret_expires_at.getTime() > now)
          secrets.push(this.unseal(a.previous_secret_sealed));
        // One event goes to many webhooks: its body is built once per batch (the bytes every webhook signs).
        let body = bodies.get(a.event_id);
        if (body === undefined) {
          body = JSON.stringify(
            customerEvent({
              id: a.event_id,
              type: a.event_type as EventType,
              data: a.event.data,
              created_at: a.event.created_at,
            }),
          );
          bodies.set(a.event_id, body);
        }
        sendable.push({ a, body, secrets });
      }
    }
    if (sendable.length === 0) return;
    for (const { a } of sendable) {
      this.inflight++;
      this.busy.set(a.webhook_id, (this.busy.get(a.webhook_id) ?? 0) + 1);
    }
    const timestamp = Math.floor(Date.now() / 1000);
    let signatures: SignatureResult[];
    try {
      signatures = await this.pool!.run(
        sendable.map(({ a, body, secrets }) => ({ id: a.event_id, timestamp, body, secrets })),
      );
    } catch (err) {
      // Not sent: the lease runs out and the attempts are claimed again.
      for (const { a } of sendable) {
        this.release(a.webhook_id);
        this.held.delete(a.id);
      }
      throw err;
    }
    sendable.forEach(({ a, body }, i) => {
      const sig = signatures[i]!;
      if (a.attempt === 1 && a.event)
        this.firstAttemptLag.observe(Math.max(0, Date.now() - a.event.created_at.getTime()) / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'meterline-webhooks/1',
        'x-webhook-id': a.event_id,
        'x-webhook-event': a.event_type,
        'x-webhook-timestamp': String(timestamp),
        'x-webhook-signature': sig.hex,
        'webhook-id': a.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sig.standard,
      };
      const p = this.sender!.send({ url: a.url, headers, body: Buffer.from(body, 'utf8') })
        .then((r) => this.finish(a, r, true))
        .finally(() => {
          this.sends.delete(p);
          this.release(a.webhook_id);
        });
      this.sends.add(p);
    });
  }

  private release(webhookId: string): void {
    this.inflight--;
    const n = (this.busy.get(webhookId) ?? 1) - 1;
    if (n <= 0) this.busy.delete(webhookId);
    else this.busy.set(webhookId, n);
  }

  /** Queues an outcome for the next batched write. `retryable`: a failure gets the next scheduled attempt. */
  private finish(a: ClaimedAttempt, r: SendResult, retryable: boolean): void {
    const attemptedAt = this.opts.clock();
    const outcome = r.ok
      ? 'succeeded'
      : r.refused
        ? 'refused'
        : r.gone
          ? 'gone'
          : r.status === null
            ? 'error'
            : 'failed';
    this.attempts.inc({ outcome });
    if (r.durationMs > 0) this.requestSeconds.observe(r.durationMs / 1000);
    if (r.refused)
      this.infra.log.warn(
        { delivery: a.id, webhook: a.webhook_id, event: a.event_id, reason: r.error },
        'webhook delivery refused by the SSRF rules',
      );
    const retryAt =
      r.ok || r.gone || !retryable ? null : nextAttemptAt(a.attempt, attemptedAt, this.opts.retryDelaysMs);
    this.outcomes.push({
      id: a.id,
      webhookId: a.webhook_id,
      accountId: a.account_id,
      eventId: a.event_id,
      eventType: a.event_type,
      attempt: a.attempt,
      succeeded: r.ok,
      responseStatus: r.status,
      error: r.error,
      durationMs: r.durationMs,
      attemptedAt,
      retryAt,
      disableWebhook: r.gone,
    });
    // Outcomes are written in batches (one transaction each); each write then claims more work.
    if (this.outcomes.length >= OUTCOME_BATCH) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), OUTCOME_FLUSH_MS);
  }

  /** Writes queued outcomes; a failed write keeps them for the next flush (the lease covers the gap). */
  private async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    while (this.flushing) await this.flushing;
    const batch = this.outcomes;
    if (batch.length === 0) return;
    this.outcomes = [];
    this.flushing = (async () => {
      try {
        const disabled = await recordOutcomes(this.infra.pg, batch);
        for (const o of batch) this.held.delete(o.id);
        if (disabled.length)
          await this.opts
            .onWebhooksDisabled?.(disabled)
            .catch((err) => this.infra.log.warn({ err }, 'webhook delivery: after-disable hook failed'));
      } catch (err) {
        this.pump.report(`recording outcomes failed: ${(err as Error).message}`);
        this.infra.log.warn({ err, outcomes: batch.length }, 'webhook delivery: recording outcomes failed; retrying');
        this.outcomes.unshift(...batch);
        if (!this.pump.isStopped) this.flushTimer ??= setTimeout(() => void this.flush(), 500);
      }
    })();
    await this.flushing;
    this.flushing = null;
    this.wake();
  }

  private unseal(sealed: string): string {
    let s = this.secrets.get(sealed);
    if (s === undefined) {
      s = unsealWebhookSecret(this.secretKey, sealed);
      if (this.secrets.size >= SECRET_CACHE_MAX) this.secrets.clear();
      this.secrets.set(sealed, s);
    }
    return s;
  }
}
