import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';

/** No acknowledgement in time: the message may or may not be stored. */
export class AckTimeoutError extends Error {
  override readonly name = 'AckTimeoutError';
}

/** Nothing listens on the subject: the 503 status NATS answers a request with when no stream does. */
export class NoStreamError extends Error {
  override readonly name = 'NoStreamError';
}

export interface PubAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

interface Pending {
  deadline: number;
  resolve: (ack: PubAck) => void;
  reject: (err: Error) => void;
}

/**
 * JetStream publishes of the ingest hot path, for less CPU than `js.publish`: a JetStream publish is a core
 * NATS request to the stream's subject answered by a PubAck, so this publishes with a reply subject on ONE
 * inbox subscription of our own and matches the answers by token. Per message it saves what nats.js's
 * request muxing costs: a promise race, a timer and a deferred per request, an Error built on every
 * answer (`cancel()` after resolve), the options spread and retry scaffolding of `js.publish`, and a
 * TextDecoder per PubAck. Timeouts share one timer (every publish has the same timeout, so deadlines
 * come in order).
 *
 * Answers map to the same outcomes as `js.publish`: a PubAck → stored (`duplicate` as JetStream says);
 * an error PubAck → JetStreamApiError; no responders (no stream on the subject) → NoStreamError; no
 * answer in time → AckTimeoutError (the message may or may not be stored).
 */
export class StreamPublisher {
  private readonly prefix: string;
  private readonly sub: Subscription;
  /** By token, in publish order: deadlines ascend. */
  private readonly pending = new Map<string, Pending>();
  private next = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.prefix = `${createInbox()}.`;
    this.sub = nc.subscribe(`${this.prefix}*`, { callback: (err, m) => (err ? undefined : this.answer(m)) });
  }

  /**
   * Publishes `data` to `subject` with `headers` (Nats-Msg-Id among them) and resolves with JetStream's
   * acknowledgement of that message; rejects with nats.js's error when it refuses to send it.
   */
  publish(subject: string, data: Uint8Array, headers: MsgHdrs): Promise<PubAck> {
    const token = (this.next++).toString(36);
    return new Promise<PubAck>((resolve, reject) => {
      this.nc.publish(subject, data, { reply: this.prefix + token, headers });
      this.pending.set(token, { deadline: Date.now() + this.timeoutMs, resolve, reject });
      this.timer ??= setTimeout(this.expire, this.timeoutMs).unref();
    });
  }

  private answer(m: Msg): void {
    const token = m.subject.slice(this.prefix.length);
    const p = this.pending.get(token);
    if (!p) return; // answered after its timeout: the publisher settles that message with a void marker
    this.pending.delete(token);
    if (m.data.length === 0 && m.headers?.code === 503) return p.reject(new NoStreamError('jetstream is not enabled')); // js.publish's words
    let ack: PubAck & { error?: { code: number; err_code: number; description: string } };
    try {
      ack = JSON.parse(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength).toString('utf8'));
    } catch {
      return p.reject(new Error('invalid ack response'));
    }
    if (ack.error) return p.reject(new JetStreamApiError(ack.error));
    if (!ack.stream) return p.reject(new Error('invalid ack response'));
    ack.duplicate = ack.duplicate === true;
    p.resolve(ack);
  }

  private readonly expire = (): void => {
    this.timer = undefined;
    const now = Date.now();
    for (const [token, p] of this.pending) {
      if (p.deadline > now) {
        this.timer = setTimeout(this.expire, p.deadline - now).unref();
        return;
      }
      this.pending.delete(token);
      p.reject(new AckTimeoutError('no acknowledgement from JetStream in time'));
    }
  };

  /** Once every publish was answered (the publisher's stop). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.sub.unsubscribe();
  }
}
