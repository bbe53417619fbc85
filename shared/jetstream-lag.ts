/**
 * How far a durable JetStream consumer is behind its stream, read from the server at scrape time (the
 * consumer's own view, whichever process of the role is asked): messages not delivered yet, delivered and not
 * acked, and redelivered and not acked. The on-call's "is usage reaching ClickHouse" (docs/metrics.md).
 */
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from './clients/nats.js';
import type { Metrics } from './metrics.js';
import { withTimeout } from './service.js';

const SCRAPE_TIMEOUT_MS = 2_000;

export function registerConsumerLag(metrics: Metrics, nc: NatsConnection, stream: string, durable: string): void {
  let jsm: Promise<JetStreamManager> | undefined;
  let info: Promise<{ pending: number; ackPending: number; redelivered: number } | null> | undefined;
  /** One server request per scrape for the three gauges (each reads it when collected). */
  const read = () =>
    (info ??= (async () => {
      try {
        jsm ??= jetstreamManager(nc);
        const c = await withTimeout((await jsm).consumers.info(stream, durable), SCRAPE_TIMEOUT_MS, 'consumer info');
        return { pending: c.num_pending, ackPending: c.num_ack_pending, redelivered: c.num_redelivered };
      } catch {
        jsm = undefined;
        return null; // NATS unreachable: the series are absent from this scrape (alert on absence, not on 0)
      } finally {
        setTimeout(() => (info = undefined), 100).unref();
      }
    })());
  const gauge = (name: string, help: string, pick: (i: NonNullable<Awaited<ReturnType<typeof read>>>) => number) =>
    metrics.labelledGauge(name, help, ['stream', 'consumer'], async (set) => {
      const i = await read();
      if (i) set({ stream, consumer: durable }, pick(i));
    });
  gauge(
    'meterline_jetstream_consumer_pending_messages',
    'Messages of the stream not yet delivered to the durable consumer (its backlog)',
    (i) => i.pending,
  );
  gauge(
    'meterline_jetstream_consumer_ack_pending_messages',
    'Messages delivered to the durable consumer and not acknowledged yet',
    (i) => i.ackPending,
  );
  gauge(
    'meterline_jetstream_consumer_redelivered_messages',
    'Messages delivered more than once to the durable consumer and not acknowledged yet',
    (i) => i.redelivered,
  );
}
