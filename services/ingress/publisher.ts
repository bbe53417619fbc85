import { connect, headers as natsHeaders, nuid, Empty, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, JetStreamApiError, type JetStreamClient } from '@nats-io/jetstream';
import type { Logger } from '../../shared/logging.js';
import type { Metrics } from '../../shared/metrics.js';
import { natsServerOptions, type NatsNames } from '../../shared/clients/nats.js';
import { UnavailableError } from '../../shared/errors.js';
import { HDR_COUNT, HDR_DEADLINE, HDR_FORMAT, HDR_VOID, WIRE_FORMAT } from '../../shared/usage/wire.js';
import { NoStreamError, StreamPublisher } from './stream-acks.js';

/**
 * Durable acceptance with group commit. Requests hand over their encoded rows; rows of one account travel
 * together in ONE JetStream message, and every request in it is answered when JetStream acknowledged that
 * message. A request's rows never span two messages, so a request is accepted or refused as a whole.
 *
 * When to flush (adaptive group commit): at the end of the event-loop turn that received the rows, as long
 * as fewer than MAX_INFLIGHT_MESSAGES publishes await their ack; otherwise rows accumulate until an ack
 * frees a slot (or the group reaches FLUSH_BYTES). Light load: one message per request, no added wait.
 * Heavy load: the ack round trip itself is the batching window, so messages grow with the load and the
 * number of acknowledged publishes per second stays small.
 *
 * Failure handling — the promise: a 202 means stored, a 503 means never counted.
 * - NATS disconnected when a group flushes, or too much already in flight → 503 at once; nothing is sent
 *   (nats.js discards what was buffered while disconnected, so nothing goes out later either).
 * - JetStream answers with an error (stream full: discard new) → definitive, 503. "No responders" (no stream
 *   listening) is settled like a lost answer: after a server restart it may answer a re-sent copy of a message
 *   whose first copy was stored.
 * - No answer (timeout, connection lost after sending): the message may or may not be stored. We then
 *   publish a void marker with the same msg id, repeatedly, until JetStream answers: "duplicate" means the
 *   original is stored (202); stored as new means the original never was and, its id now taken, never will
 *   be (503). This relies on NATS handling one connection's messages in order and on the stream's
 *   duplicate window (2 min) outliving SETTLE_FOR_MS.
 * - Still unanswered after SETTLE_FOR_MS → 503. Each message carries a deadline (sent + DEADLINE_MS);
 *   the consumer skips messages the stream stored after it, so a message stuck in a slow server is not
 *   counted later. What remains uncertain — JetStream stored the message, its ack was lost and NATS stayed
 *   unreachable for SETTLE_FOR_MS — is counted and logged as `usage publish outcome unknown`.
 */
export const MAX_INFLIGHT_MESSAGES = 4;
export const FLUSH_BYTES = 256 * 1024;
export const PUBLISH_TIMEOUT_MS = 2_000;
export const SETTLE_FOR_MS = 15_000;
/** Ack arrival (ingress clock) vs storage time (NATS clock): allowance for skew between the two hosts. */
export const CLOCK_SKEW_MS = 5_000;
export const DEADLINE_MS = SETTLE_FOR_MS + CLOCK_SKEW_MS;
/** Bytes published and not yet acknowledged, plus bytes waiting to flush: above this we refuse (503). */
export const MAX_INFLIGHT_BYTES = 64 * 1024 * 1024;
/** JetStream's duplicate-detection header (what js.publish's `msgID` option sets). */
const MSG_ID_HEADER = 'Nats-Msg-Id';

type Outcome = 'stored' | 'refused' | 'unknown';

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  /** What the request's promise resolves to once stored (submit's `answer`). */
  answer: (() => unknown) | undefined;
}

interface Group {
  subject: string;
  /** The requests' payloads, in arrival order: concatenated once, when the group is published. */
  chunks: Uint8Array[];
  bytes: number;
  count: number;
  waiters: Waiter[];
}

export interface UsagePublisherOptions {
  natsUrl: string;
  names: NatsNames;
  log: Logger;
  metrics: Metrics;
  /** Connection name, for `nats server report connections`. */
  name: string;
}

export class UsagePublisher {
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  /** The hot path's publishes (the void markers of settle() go through `js`). */
  private acks: StreamPublisher | undefined;
  private connected = false;
  private reconnectWaiters: (() => void)[] = [];
  private readonly groups = new Map<string, Group>();
  private scheduled = false;
  private inflightMessages = 0;
  private inflightBytes = 0;
  private readonly inflight = new Set<Promise<void>>();
  private stopping = false;
  private maxMessageBytes = 1024 * 1024;
  private readonly log: Logger;
  private readonly publishSeconds;
  private readonly messages;
  private readonly rowsPerMessage;
  private readonly refused;
  private readonly accepted;

  constructor(private readonly opts: UsagePublisherOptions) {
    this.log = opts.log;
    this.publishSeconds = opts.metrics.histogram(
      'meterline_usage_publish_seconds',
      'Time from flush to JetStream acknowledgement',
      [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2],
    );
    this.messages = opts.metrics.counter(
      'meterline_usage_messages_total',
      'USAGE stream messages by outcome: stored (acknowledged by JetStream: their requests get 202), refused (not stored in time: 503, a void marker cancels a late copy), unknown (could not be settled: 503, logged)',
      ['outcome'],
    );
    this.rowsPerMessage = opts.metrics.histogram(
      'meterline_usage_rows_per_message',
      'Records packed into one JetStream message',
      [1, 2, 5, 10, 50, 100, 500, 1000, 5000, 20000],
    );
    this.refused = opts.metrics.counter(
      'meterline_usage_refused_total',
      'Requests answered 503 by reason: disconnected (NATS unreachable), saturated (too many records waiting for a publish), stopping (the process is shutting down), nats_error (JetStream refused or timed out), unknown',
      ['reason'],
    );
    this.accepted = opts.metrics.counter(
      'meterline_usage_records_accepted_total',
      'Records JetStream stored (their requests get 202)',
    );
  }

  get isConnected(): boolean {
    return this.connected;
  }

  async start(): Promise<void> {
    // A connection of its own: the hot path's acks never queue behind other traffic, and async stack
    // traces (an Error per request) are off.
    const nc = await connect({
      ...natsServerOptions(this.opts.natsUrl),
      name: this.opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 5_000,
      maxPingOut: 2,
      noAsyncTraces: true,
    });
    this.nc = nc;
    this.js = jetstream(nc, { timeout: PUBLISH_TIMEOUT_MS });
    this.acks = new StreamPublisher(nc, PUBLISH_TIMEOUT_MS);
    this.connected = true;
    this.maxMessageBytes = Math.min(this.maxMessageBytes, nc.info?.max_payload ?? this.maxMessageBytes);
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') {
          this.connected = false;
          this.log.warn({ server: s.server }, 'usage publisher: NATS disconnected');
          // Rows waiting to flush were never sent: refuse them now.
          this.flushAll();
        } else if (s.type === 'reconnect') {
          this.connected = true;
          this.log.info({ server: s.server }, 'usage publisher: NATS reconnected');
          for (const w of this.reconnectWaiters.splice(0)) w();
        }
      }
    })();
  }

  /**
   * Resolves once JetStream stored `rows` (one or more rows of `accountId`, shared/usage/wire.ts) — with what
   * `answer` returns then, if given (the request's reply: no `then` and microtask hop per request); rejects
   * with a 503 UnavailableError when they were not and never will be counted.
   */
  submit(subject: string, rows: Uint8Array, count: number): Promise<void>;
  submit<T>(subject: string, rows: Uint8Array, count: number, answer: () => T): Promise<T>;
  submit(subject: string, rows: Uint8Array, count: number, answer?: () => unknown): Promise<unknown> {
    if (!this.connected || this.stopping) {
      this.refused.inc({ reason: this.stopping ? 'stopping' : 'disconnected' });
      return Promise.reject(unavailable('The usage stream (NATS) is unreachable; nothing was recorded.'));
    }
    const bytes = rows.length;
    if (this.inflightBytes + bytes > MAX_INFLIGHT_BYTES) {
      this.refused.inc({ reason: 'saturated' });
      return Promise.reject(unavailable('Usage ingestion is saturated; nothing was recorded.', 1));
    }
    let group = this.groups.get(subject);
    if (group && group.bytes + bytes > this.maxMessageBytes - 4096) {
      this.flush(group);
      group = undefined;
    }
    if (!group) {
      group = { subject, chunks: [], bytes: 0, count: 0, waiters: [] };
      this.groups.set(subject, group);
    }
    group.chunks.push(rows);
    group.bytes += bytes;
    group.count += count;
    this.inflightBytes += bytes;
    const g = group;
    const p = new Promise<unknown>((resolve, reject) => g.waiters.push({ resolve, reject, answer }));
    if (group.bytes >= FLUSH_BYTES) this.flush(group);
    else this.schedule();
    return p;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const g of [...this.groups.values()]) {
        if (this.inflightMessages >= MAX_INFLIGHT_MESSAGES) break; // an ack will call us again
        this.flush(g);
      }
    });
  }

  /** Flushes every group now (disconnect: they are refused; stop: they are published). */
  private flushAll(): void {
    for (const g of [...this.groups.values()]) this.flush(g);
  }

  private flush(g: Group): void {
    this.groups.delete(g.subject);
    if (!this.connected || !this.js) {
      this.inflightBytes -= g.bytes;
      this.refused.inc({ reason: 'disconnected' }, g.waiters.length);
      const err = unavailable('The usage stream (NATS) is unreachable; nothing was recorded.');
      for (const w of g.waiters) w.reject(err);
      return;
    }
    this.inflightMessages++;
    const work = this.publish(g).finally(() => {
      this.inflightMessages--;
      this.inflightBytes -= g.bytes;
      this.inflight.delete(work);
      if (this.groups.size > 0) this.schedule();
    });
    this.inflight.add(work);
  }

  private async publish(g: Group): Promise<void> {
    const msgID = nuid.next();
    const sentAt = Date.now();
    const h = natsHeaders();
    h.set(HDR_FORMAT, WIRE_FORMAT);
    h.set(HDR_COUNT, String(g.count));
    h.set(HDR_DEADLINE, String(sentAt + DEADLINE_MS));
    h.set(MSG_ID_HEADER, msgID);
    const started = performance.now();
    let outcome: Outcome;
    let reason = '';
    try {
      await this.acks!.publish(g.subject, g.chunks.length === 1 ? g.chunks[0]! : Buffer.concat(g.chunks, g.bytes), h);
      outcome = 'stored';
      this.publishSeconds.observe((performance.now() - started) / 1000);
      this.rowsPerMessage.observe(g.count);
    } catch (err) {
      // "No responders" is no proof: nats.js re-sends a publish cut off by a disconnect once it reconnects, and
      // a restarted server answers that before its streams are loaded, while the first copy may be stored
      // (ingest-nats-outage caught one such record answered 503). Settling asks the stream itself.
      if (isDefinitive(err) && !isNoResponders(err)) {
        outcome = 'refused';
        reason = (err as Error).message;
      } else {
        this.log.warn(
          { err: (err as Error).message, msgID, rows: g.count },
          'usage publish unacknowledged; settling with a void marker',
        );
        outcome = await this.settle(g.subject, msgID, sentAt);
        reason = outcome === 'refused' ? 'NATS did not store the records in time' : 'NATS is unreachable';
      }
    }
    this.messages.inc({ outcome });
    if (outcome === 'stored') {
      this.accepted.inc(g.count);
      for (const w of g.waiters) answerStored(w);
      return;
    }
    if (outcome === 'unknown') this.log.error({ msgID, rows: g.count }, 'usage publish outcome unknown');
    this.refused.inc({ reason: outcome === 'unknown' ? 'unknown' : 'nats_error' }, g.waiters.length);
    const full = /maximum (bytes|messages)|resource limits|insufficient resources/i.test(reason);
    const err = unavailable(
      full
        ? 'The usage stream is full; nothing was recorded.'
        : `The usage stream did not accept the records (${reason}); nothing was recorded.`,
      full ? 5 : 1,
    );
    for (const w of g.waiters) w.reject(err);
  }

  /** Learns (or decides) the fate of an unacknowledged message; see the class comment. */
  private async settle(subject: string, msgID: string, sentAt: number): Promise<Outcome> {
    const until = sentAt + SETTLE_FOR_MS;
    while (Date.now() < until) {
      if (!this.connected) {
        await this.waitForReconnect(until - Date.now());
        continue;
      }
      const h = natsHeaders();
      h.set(HDR_VOID, '1');
      try {
        const ack = await this.js!.publish(subject, Empty, {
          msgID,
          headers: h,
          timeout: Math.max(1, Math.min(PUBLISH_TIMEOUT_MS, until - Date.now())),
        });
        this.log.info({ msgID, duplicate: ack.duplicate }, 'usage publish settled');
        return ack.duplicate ? 'stored' : 'refused';
      } catch (err) {
        // An error answer from the stream came after the original on the same connection: the original was not
        // stored. No responders: the stream is not loaded yet (a restart) — ask again.
        if (isDefinitive(err) && !isNoResponders(err)) return 'refused';
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return 'unknown';
  }

  private waitForReconnect(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.reconnectWaiters.push(done);
    });
  }

  /** Flushes what is pending and waits for every in-flight publish to be answered. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.flushAll();
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
    this.acks?.close();
    if (this.nc && !this.nc.isClosed()) await this.nc.drain().catch(() => undefined);
  }
}

/** A request whose rows are stored: its promise resolves (with its answer, when it asked for one). */
function answerStored(w: Waiter): void {
  if (w.answer === undefined) return w.resolve(undefined);
  try {
    w.resolve(w.answer());
  } catch (err) {
    w.reject(err as Error);
  }
}

function unavailable(detail: string, retryAfter = 1): UnavailableError {
  return new UnavailableError(detail, retryAfter);
}

/** No stream listened on the subject when this copy arrived (js.publish's and StreamPublisher's words for it). */
function isNoResponders(err: unknown): boolean {
  return err instanceof NoStreamError || (err instanceof Error && err.name === 'JetStreamNotEnabled');
}

/** JetStream answered: the message was not stored (an error reply, or no stream listening at all). */
function isDefinitive(err: unknown): boolean {
  // JetStreamNotEnabled (js.publish's "no responders" error) is not exported by @nats-io/jetstream's main entry.
  return (
    err instanceof JetStreamApiError ||
    err instanceof NoStreamError ||
    (err instanceof Error && err.name === 'JetStreamNotEnabled')
  );
}
