/**
 * The usage stream of `meterline/client` (Node-only: the `ws` package, which can send an Authorization
 * header): GET /v1/usage/stream (docs/design.md §8). `send(records)` writes one frame `{seq, records}` and
 * resolves with its answer once JetStream stored it — or rejects with a MeterlineError for a refused frame
 * (`rate_limited`, `unavailable`: nothing of it was recorded, `retryAfterSeconds` says when to resend), or a
 * StreamClosedError when the socket dropped before the answer (it may or may not be stored: resend it with
 * the same record ids, which makes that safe). At most `maxInflight` frames are unanswered at once (send()
 * waits for room), so a caller keeps a fixed window without counting; each answer's latency (frame written →
 * answer read) is reported on the ack and summed in the counters. The socket opens on the first send and
 * again on the next send after it closed.
 */
import { WebSocket } from 'ws';
import { MeterlineError, type BatchResult, type ClientOptions, type UsageRecord } from './api.js';

export interface StreamOptions extends Pick<ClientOptions, 'baseUrl' | 'token' | 'refreshToken'> {
  /** Frames unanswered at once (≤ the server's USAGE_STREAM_MAX_INFLIGHT, default 64, or it queues them); send() waits while full. */
  maxInflight?: number;
  /** A frame unanswered this long means the connection is dead: the socket is dropped (its frames fail with StreamClosedError). */
  answerTimeoutMs?: number;
}

/** A frame's answer: how many records were accepted, the rejected ones (index in the frame, error), and its latency. */
export interface StreamAck {
  seq: number;
  accepted: number;
  rejected: number;
  /** The results of the rejected records only (empty when all were accepted; accepted records keep the ids they were sent with). */
  rejections: BatchResult['results'];
  /** Frame written → answer read, ms. */
  latencyMs: number;
}

export interface StreamCounters {
  /** Frames written. */
  frames: number;
  /** Frames answered with an ack. */
  acks: number;
  /** Frames answered with an error (nothing of them recorded). */
  refused: number;
  /** Frames whose socket dropped before their answer. */
  unanswered: number;
  accepted: number;
  rejected: number;
  /** Frames written and not answered now (≤ maxInflight). */
  inflight: number;
  /** Σ and max of the acks' latencies (ms): the mean ack latency is ackLatencyMsSum / acks. */
  ackLatencyMsSum: number;
  ackLatencyMsMax: number;
  /** Sockets opened. */
  connects: number;
}

/** The socket dropped (or never opened: connection refused) before this frame was answered. */
export class StreamClosedError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
  ) {
    super(`usage stream closed before the answer (${code}${reason ? ` ${reason}` : ''})`);
  }
}

/** The HTTP status a frame's error code stands for (the same refusal over POST /v1/usage). */
const STATUS_OF_CODE: Record<string, number> = {
  rate_limited: 429,
  unavailable: 503,
  overloaded: 503,
  busy: 503,
  malformed_json: 400,
  validation_failed: 422,
  internal_error: 500,
};

/** `{"seq":N,"accepted":A,"rejected":R,` — the head of every ack (services/ingress/batch.ts batchOutcomeJson): read without parsing the results when R is 0. */
const ACK_HEAD = /^\{"seq":(\d+),"accepted":(\d+),"rejected":(\d+),/;

interface Pending {
  sentAt: number;
  resolve: (ack: StreamAck) => void;
  reject: (err: unknown) => void;
}

export class UsageStream {
  private ws: WebSocket | undefined;
  private opening: Promise<WebSocket> | undefined;
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly roomWaiters: (() => void)[] = [];
  private watchdog: NodeJS.Timeout | undefined;
  private readonly c: StreamCounters = {
    frames: 0,
    acks: 0,
    refused: 0,
    unanswered: 0,
    accepted: 0,
    rejected: 0,
    inflight: 0,
    ackLatencyMsSum: 0,
    ackLatencyMsMax: 0,
    connects: 0,
  };
  private readonly maxInflight: number;
  private readonly answerTimeoutMs: number;

  constructor(private readonly opts: StreamOptions) {
    this.maxInflight = opts.maxInflight ?? 64;
    this.answerTimeoutMs = opts.answerTimeoutMs ?? 60_000;
  }

  /** A copy of the counters. */
  get counters(): StreamCounters {
    return { ...this.c };
  }

  /**
   * One frame of 1–1,000 records in the shape of POST /v1/usage, or their JSON array as a string (sent as is:
   * exact decimals written by hand, or one serialisation reused). Waits for room in the window and for the socket.
   */
  async send(records: UsageRecord[] | string): Promise<StreamAck> {
    while (this.c.inflight >= this.maxInflight) await new Promise<void>((r) => this.roomWaiters.push(r));
    this.c.inflight++;
    let ws: WebSocket;
    try {
      ws = await this.socket();
    } catch (err) {
      this.freeSlot();
      throw err;
    }
    const seq = this.seq++;
    const json = typeof records === 'string' ? records : JSON.stringify(records);
    if (ws.readyState !== WebSocket.OPEN) {
      this.freeSlot();
      throw new StreamClosedError(1006, 'closed before the frame was sent');
    }
    return new Promise<StreamAck>((resolve, reject) => {
      this.pending.set(seq, { sentAt: performance.now(), resolve, reject });
      this.c.frames++;
      ws.send(`{"seq":${seq},"records":${json}}`);
    });
  }

  /** Waits until every frame is answered, then closes the socket. */
  async close(): Promise<void> {
    while (this.c.inflight > 0) await new Promise<void>((r) => this.roomWaiters.push(r));
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1000);
    });
  }

  private socket(): Promise<WebSocket> {
    if (this.ws?.readyState === WebSocket.OPEN) return Promise.resolve(this.ws);
    this.opening ??= this.connect(false).finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async connect(refreshed: boolean): Promise<WebSocket> {
    const token = refreshed
      ? await this.opts.refreshToken!()
      : typeof this.opts.token === 'function'
        ? await this.opts.token()
        : this.opts.token;
    const url = new URL('/v1/usage/stream', this.opts.baseUrl.replace(/^http/, 'ws'));
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
        ws.once('unexpected-response', (_req, res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d));
          res.on('end', () => {
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              json = undefined;
            }
            const retryAfter = Number(res.headers['retry-after'] ?? NaN);
            const problem = json && typeof json === 'object' ? (json as MeterlineError['problem']) : undefined;
            reject(
              new MeterlineError(res.statusCode ?? 0, problem, Number.isFinite(retryAfter) ? retryAfter : undefined, {
                text,
                json,
              }),
            );
          });
        });
      });
    } catch (err) {
      ws.terminate();
      if (err instanceof MeterlineError && err.status === 401 && this.opts.refreshToken && !refreshed)
        return this.connect(true);
      throw err;
    }
    this.c.connects++;
    this.ws = ws;
    ws.on('message', (data) => this.onAnswer(String(data)));
    ws.on('error', () => undefined); // followed by 'close', which fails the unanswered frames
    ws.on('close', (code, reason) => this.onClose(ws, code, String(reason)));
    this.watchdog ??= setInterval(() => this.checkAnswerTimeout(), Math.min(1000, this.answerTimeoutMs)).unref();
    return ws;
  }

  private onAnswer(text: string): void {
    const head = ACK_HEAD.exec(text);
    let seq: number;
    let ack: Omit<StreamAck, 'latencyMs'> | undefined;
    let error: MeterlineError | undefined;
    if (head && head[3] === '0') {
      seq = Number(head[1]);
      ack = { seq, accepted: Number(head[2]), rejected: 0, rejections: [] };
    } else {
      let answer: {
        seq: number | null;
        error?: { code: string; detail: string; errors?: { field: string; message: string }[]; retry_after?: number };
      } & Partial<BatchResult>;
      try {
        answer = JSON.parse(text) as typeof answer;
      } catch {
        return void this.ws?.terminate(); // not the server we speak to: its unanswered frames fail as unanswered
      }
      if (answer.seq === null || answer.seq === undefined) return; // a frame the server could not read: never one of ours
      seq = answer.seq;
      if (answer.error)
        error = new MeterlineError(STATUS_OF_CODE[answer.error.code] ?? 400, answer.error, answer.error.retry_after, {
          text,
          json: answer,
        });
      else
        ack = {
          seq,
          accepted: answer.accepted ?? 0,
          rejected: answer.rejected ?? 0,
          rejections: (answer.results ?? []).filter((r) => r.status !== 'accepted'),
        };
    }
    const p = this.pending.get(seq);
    if (!p) return;
    this.pending.delete(seq);
    this.freeSlot();
    if (error || !ack) {
      this.c.refused++;
      return p.reject(error);
    }
    const latencyMs = performance.now() - p.sentAt;
    this.c.acks++;
    this.c.accepted += ack.accepted;
    this.c.rejected += ack.rejected;
    this.c.ackLatencyMsSum += latencyMs;
    if (latencyMs > this.c.ackLatencyMsMax) this.c.ackLatencyMsMax = latencyMs;
    p.resolve({ ...ack, latencyMs });
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (this.ws === ws) this.ws = undefined;
    const lost = [...this.pending.values()];
    this.pending.clear();
    for (const p of lost) {
      this.c.unanswered++;
      this.freeSlot();
      p.reject(new StreamClosedError(code, reason));
    }
    if (!this.ws && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
    }
  }

  /** The oldest unanswered frame is the Map's first entry (insertion order, answered ones deleted). */
  private checkAnswerTimeout(): void {
    const oldest = this.pending.values().next().value as Pending | undefined;
    if (oldest && performance.now() - oldest.sentAt > this.answerTimeoutMs) this.ws?.terminate();
  }

  private freeSlot(): void {
    this.c.inflight--;
    this.roomWaiters.shift()?.();
    // close() waits for zero in flight: wake it too once nothing is pending.
    if (this.c.inflight === 0) for (const w of this.roomWaiters.splice(0)) w();
  }
}
