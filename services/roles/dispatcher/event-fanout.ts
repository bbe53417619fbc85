import { AckPolicy, DeliverPolicy, jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { Infra } from '../../../shared/infra.js';
import { ensureDurableConsumer, retryTransient } from '../../../shared/clients/durable-consumer.js';
import type { Component } from '../role.js';
import type { EventEnvelope } from '../../domain/events/outbox-store.js';
import {
  enabledWebhooksOf,
  insertFirstAttempts,
  type ClaimedAttempt,
  type EnabledWebhook,
  type FirstAttempt,
} from '../../domain/webhooks/delivery-store.js';

/** The sender of the same process, which takes first attempts leased at insert (./handed-attempts.ts). */
export interface FirstAttemptHandoff {
  leaseMs: number;
  handOffPlan(webhookIds: string[]): boolean[];
  handOver(attempts: ClaimedAttempt[], leaseEndsAt: number): void;
}

export interface FanoutOptions {
  /** When first attempts are due (the delivery clock). */
  clock: () => Date;
  /** Events per Postgres round trip. */
  maxBatch: number;
  /** A batch is written at the latest this long after its first event arrived. */
  maxWaitMs: number;
  ackWaitMs: number;
  /** Told after first attempts were recorded, so they are sent without waiting for a poll. */
  onRecorded?: () => void;
  /**
   * Records what else the events ask for (the invoice emails, when SMTP_URL is set) before they are acked; a
   * failure naks them like a failed webhook write. Must be idempotent: a redelivered event comes through again.
   */
  alsoRecord?: (events: EventEnvelope[]) => Promise<void>;
  /** First attempts this process sends without claiming them; without it every attempt waits for a claim. */
  handoff?: FirstAttemptHandoff;
}

const DEFAULTS: FanoutOptions = { clock: () => new Date(), maxBatch: 500, maxWaitMs: 5, ackWaitMs: 30_000 };

/**
 * Reads the EVENTS stream (durable pull consumer shared by every dispatcher process) and records, for each
 * event, attempt 1 for every enabled webhook of the event's account subscribed to its type — in Postgres,
 * before acking the event. A redelivered event adds no second row (unique event, webhook, attempt); an event
 * whose write failed is nak'ed and comes back.
 */
export class EventFanout implements Component {
  readonly name = 'webhook-fanout';
  private readonly opts: FanoutOptions;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private pending: JsMsg[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private stopping = false;
  private lastError: string | undefined;
  private readonly fannedOut;

  constructor(
    private readonly infra: Infra,
    opts: Partial<FanoutOptions> = {},
  ) {
    this.opts = { ...DEFAULTS, ...opts };
    this.fannedOut = infra.metrics.counter(
      'meterline_webhook_fanout_total',
      'Events read from EVENTS and first attempts recorded',
      ['what'],
    );
  }

  async start(): Promise<void> {
    const { nats, natsNames: names } = this.infra;
    const config = {
      durable_name: names.fanoutConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: this.opts.ackWaitMs * 1_000_000,
      max_ack_pending: 20_000,
      max_deliver: -1,
    };
    await ensureDurableConsumer(nats, names.eventsStream, config);
    const consumer = await retryTransient(() =>
      jetstream(nats).consumers.get(names.eventsStream, names.fanoutConsumer),
    );
    const messages = await consumer.consume({ max_messages: 1_000 });
    this.messages = messages;
    this.loop = (async () => {
      for await (const m of messages) {
        if (this.stopping) {
          m.nak();
          continue;
        }
        this.pending.push(m);
        if (this.pending.length >= this.opts.maxBatch) await this.flush();
        else this.timer ??= setTimeout(() => void this.flush(), this.opts.maxWaitMs);
      }
    })().catch((err) => {
      this.lastError = (err as Error).message;
      this.infra.log.error({ err }, 'webhook fan-out loop failed');
    });
    this.infra.log.info({ stream: names.eventsStream, durable: names.fanoutConsumer }, 'webhook fan-out started');
  }

  /** Writes are serialised: a batch waits for the previous one, so the loop's backpressure is one batch. */
  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return this.writing;
    this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  private async write(batch: JsMsg[]): Promise<void> {
    const events: EventEnvelope[] = [];
    const usable: JsMsg[] = [];
    for (const m of batch) {
      try {
        const e = m.json<EventEnvelope>();
        if (typeof e.id !== 'string' || typeof e.account_id !== 'string' || typeof e.type !== 'string')
          throw new Error('missing id, account_id or type');
        events.push(e);
        usable.push(m);
      } catch (err) {
        this.infra.log.error(
          { seq: m.seq, subject: m.subject, err: (err as Error).message },
          'webhook fan-out: undecodable event terminated',
        );
        m.term();
      }
    }
    try {
      const hooks = await enabledWebhooksOf(this.infra.pg, [...new Set(events.map((e) => e.account_id))]);
      const rows: FirstAttempt[] = [];
      const targets: { e: EventEnvelope; h: EnabledWebhook }[] = [];
      for (const e of events) {
        for (const h of hooks) {
          // A delivery is the webhook's account's (its log lists it): a deployment webhook's, every customer's events.
          if ((h.account_id === e.account_id || h.scope === 'deployment') && h.events.includes(e.type)) {
            rows.push({ webhookId: h.id, accountId: h.account_id, eventId: e.id, eventType: e.type });
            targets.push({ e, h });
          }
        }
      }
      const handoff = this.opts.handoff;
      const leased = handoff?.handOffPlan(rows.map((r) => r.webhookId)) ?? [];
      rows.forEach((r, i) => {
        r.leased = leased[i] === true;
      });
      // Taken before the insert: Postgres starts the lease later than this, never earlier.
      const leaseEndsAt = Date.now() + (handoff?.leaseMs ?? 0);
      const ids = await insertFirstAttempts(this.infra.pg, rows, this.opts.clock(), handoff?.leaseMs ?? 0);
      const inserted = ids.filter((id) => id !== null).length;
      // Rows a redelivered event already had (id null) are not ours to send: a claim finds them.
      const handed = ids.flatMap((id, i) => (id !== null && leased[i] ? [firstAttempt(id, targets[i]!)] : []));
      if (handoff && handed.length) handoff.handOver(handed, leaseEndsAt);
      await this.opts.alsoRecord?.(events);
      for (const m of usable) m.ack();
      this.fannedOut.inc({ what: 'events' }, usable.length);
      this.fannedOut.inc({ what: 'attempts' }, inserted);
      this.lastError = undefined;
      if (inserted > 0) this.opts.onRecorded?.();
    } catch (err) {
      this.lastError = `recording deliveries failed: ${(err as Error).message}`;
      this.infra.log.warn(
        { err, events: usable.length },
        'webhook fan-out: recording deliveries failed; events will be redelivered',
      );
      for (const m of usable) m.nak(1_000);
    }
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.messages?.stop();
    await this.loop;
    await this.flush();
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    if (!this.messages || this.stopping) return { ok: false, detail: 'not consuming' };
    return this.lastError ? { ok: false, detail: this.lastError } : { ok: true };
  }
}

/** A first attempt as a claim would return it, from the event on the stream and the webhook just read. */
function firstAttempt(id: string, { e, h }: { e: EventEnvelope; h: EnabledWebhook }): ClaimedAttempt {
  return {
    id,
    webhook_id: h.id,
    account_id: h.account_id,
    event_id: e.id,
    event_type: e.type,
    attempt: 1,
    url: h.url,
    webhook_status: 'enabled',
    secret_sealed: h.secret_sealed,
    previous_secret_sealed: h.previous_secret_sealed,
    previous_secret_expires_at: h.previous_secret_expires_at,
    event: { data: e.data, created_at: new Date(e.created_at) },
  };
}
