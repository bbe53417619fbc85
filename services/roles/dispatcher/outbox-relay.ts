import pg from 'pg';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { Infra } from '../../../shared/infra.js';
import { withTransaction } from '../../../shared/clients/postgres.js';
import type { Component } from '../role.js';
import {
  lockUnpublishedEvents,
  markEventsPublished,
  type EventEnvelope,
  type OutboxRow,
} from '../../domain/events/outbox-store.js';
import { customerEvent } from '../../domain/events/payload.js';
import { DeliveryPump } from './delivery-pump.js';

/**
 * Outbox relay: moves committed control-plane events from Postgres (outbox_events, written in the same
 * transaction as the change) to the EVENTS stream, in seq order, then marks them published.
 *
 * - Exactly once into the stream: each event is published with its id as the JetStream message id, so a
 *   relay that crashes after publishing but before marking re-publishes into JetStream's duplicate window
 *   and the stream keeps one copy.
 * - Several relays may run (one per dispatcher process): `FOR UPDATE SKIP LOCKED` hands each batch to one.
 * - Wakes on NOTIFY from the insert trigger (250_outbox_notify.sql: delivered at commit, never for a
 *   rollback) and polls every pollIntervalMs as a fallback for a missed notification or a lost listener.
 */
export interface OutboxRelayOptions {
  /** Fallback poll period. */
  pollIntervalMs?: number;
  /** Events per transaction. */
  batchSize?: number;
  /** LISTEN for the insert trigger's notifications (off only to test the poll fallback). */
  listen?: boolean;
  /** JetStream publish acknowledgement timeout. */
  publishTimeoutMs?: number;
}

export const OUTBOX_CHANNEL = 'outbox_events';

/** The bytes on the EVENTS stream: the customer payload `{id, type, data, created_at}` plus `account_id` for routing. */
export function eventPayload(r: OutboxRow): EventEnvelope {
  return { ...customerEvent(r), account_id: r.account_id };
}

export class OutboxRelay implements Component {
  readonly name = 'outbox-relay';
  private readonly js: JetStreamClient;
  private readonly pollIntervalMs: number;
  private readonly batchSize: number;
  private readonly publishTimeoutMs: number;
  private listener: pg.Client | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectDelayMs = 250;
  private listenGen = 0;
  private readonly pump: DeliveryPump;
  private readonly published;
  private readonly duplicates;
  private readonly lag;

  constructor(
    private readonly infra: Infra,
    private readonly opts: OutboxRelayOptions = {},
  ) {
    this.js = jetstream(infra.nats);
    this.pollIntervalMs = opts.pollIntervalMs ?? 1_000;
    this.batchSize = opts.batchSize ?? 100;
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 5_000;
    this.pump = new DeliveryPump({
      name: 'outbox relay',
      failure: 'relay failed',
      pollIntervalMs: this.pollIntervalMs,
      log: infra.log,
      pass: () => this.drain(),
    });
    this.published = infra.metrics.counter(
      'meterline_outbox_published_total',
      'Outbox events published to the EVENTS stream',
      ['type'],
    );
    this.duplicates = infra.metrics.counter(
      'meterline_outbox_duplicates_total',
      'Outbox publishes JetStream dropped as duplicates (re-publish after a crash or lost ack)',
    );
    this.lag = infra.metrics.histogram(
      'meterline_outbox_relay_lag_seconds',
      'Commit-to-publish delay of outbox events',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 30],
    );
  }

  async start(): Promise<void> {
    this.pump.start(); // events committed while no relay ran; listen() wakes it again once listening
    if (this.opts.listen !== false) await this.listen();
  }

  async stop(): Promise<void> {
    const stopping = this.pump.stop();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.listenGen++; // the listener's own 'end' is not a loss
    await stopping;
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => undefined);
  }

  async health(): Promise<{ ok: boolean; detail?: string }> {
    return this.pump.health();
  }

  /** Starts a drain unless one runs; a wake-up during a drain runs one more pass after it. */
  wake(): void {
    this.pump.wake();
  }

  /** One pass of the pump (./delivery-pump.ts): relays batches until the outbox is empty; a failed publish throws. */
  private async drain(): Promise<void> {
    while (!this.pump.isStopped) {
      const { selected, failed } = await this.relayBatch();
      if (failed) throw failed;
      if (selected < this.batchSize) break;
    }
    this.pump.clear();
  }

  /** One transaction: lock a batch, publish it, mark what JetStream acknowledged. */
  async relayBatch(): Promise<{ selected: number; published: number; failed?: Error }> {
    return withTransaction(this.infra.pg, async (c) => {
      const rows = await lockUnpublishedEvents(c, this.batchSize);
      if (rows.length === 0) return { selected: 0, published: 0 };
      // Published back to back on one connection: the stream receives them in seq order.
      const results = await Promise.allSettled(
        rows.map((r) =>
          this.js.publish(this.infra.natsNames.eventSubject(r.type), JSON.stringify(eventPayload(r)), {
            msgID: r.id,
            timeout: this.publishTimeoutMs,
          }),
        ),
      );
      const done = rows.filter((_, i) => results[i]!.status === 'fulfilled');
      if (done.length) {
        await markEventsPublished(
          c,
          done.map((r) => r.id),
        );
        const now = Date.now();
        for (const r of done) {
          this.published.inc({ type: r.type });
          this.lag.observe(Math.max(0, now - r.created_at.getTime()) / 1000);
        }
        for (const res of results) if (res.status === 'fulfilled' && res.value.duplicate) this.duplicates.inc();
      }
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      return {
        selected: rows.length,
        published: done.length,
        failed: rejected ? (rejected.reason as Error) : undefined,
      };
    });
  }

  private async listen(): Promise<void> {
    // Each connection attempt is a generation; events of an older one (a late 'end') are ignored.
    const gen = ++this.listenGen;
    const client = new pg.Client({ connectionString: this.infra.config.DATABASE_URL });
    const lost = (err: Error) => {
      if (gen !== this.listenGen) return;
      this.listenGen++;
      this.listener = null;
      client.end().catch(() => undefined);
      this.scheduleReconnect(err);
    };
    client.on('notification', () => this.wake());
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    } catch (err) {
      lost(err as Error);
      return;
    }
    if (gen !== this.listenGen) {
      await client.end().catch(() => undefined); // stopped or lost meanwhile
      return;
    }
    this.listener = client;
    this.reconnectDelayMs = 250;
    this.wake(); // anything committed while we were not listening
  }

  /** The poll keeps events flowing meanwhile; reconnect with capped backoff. */
  private scheduleReconnect(err: Error): void {
    if (this.pump.isStopped || this.reconnectTimer) return;
    this.infra.log.warn({ err }, 'outbox relay lost its LISTEN connection; reconnecting');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.listen();
    }, this.reconnectDelayMs);
    this.reconnectTimer.unref();
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, 10_000);
  }
}

export function createOutboxRelay(infra: Infra, opts?: OutboxRelayOptions): OutboxRelay {
  return new OutboxRelay(infra, opts);
}
