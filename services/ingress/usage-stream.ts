import type { WebSocket } from 'uWebSockets.js';
import { DomainError, UpgradeRequiredError, ValidationError, type FieldError } from '../../shared/errors.js';
import type { Authenticator, Principal } from '../../shared/auth/types.js';
import type { RouteDef } from '../../shared/http/route.js';
import type { Logger } from '../../shared/logging.js';
import type { Metrics } from '../../shared/metrics.js';
import { problemResponse } from '../../shared/http/problems.js';
import { reply } from '../../shared/http/reply.js';
import { MAX_BODY_BYTES } from '../../shared/http/body.js';
import { accountCaller, type BodyBudget } from '../../shared/http/body-budget.js';
import { batchOutcomeJson, checkBatch, checkBatchSize, takeCustomerRates, usageSubjectOf } from './batch.js';
import { recordContext, takeRequestRecords } from './emitter.js';
import { itemMeters } from './record-usage.js';
import type { IngressDeps } from './deps.js';

/**
 * GET /v1/usage/stream (docs/design.md §8, Usage stream): a WebSocket for emitters that send continuously.
 * Each text frame `{seq, records}` is a batch in the shape of POST /v1/usage (the same rules, `checkBatch`),
 * answered after JetStream stored it with `{seq, accepted, rejected, results}`, or `{seq, error}`. Frames are
 * handled concurrently (acks may come out of order) and group-committed with every other request.
 *
 * Backpressure: a socket takes no new frame while it has `maxInflight` frames unanswered, or while more
 * than MAX_BUFFERED_BYTES of answers wait to be sent (a client that stops reading). uws-pack 20.0.8 cannot
 * pause a WebSocket's reads, so frames that arrive meanwhile wait unparsed in a queue of at most
 * MAX_QUEUED_BYTES, and frames beyond that are answered `unavailable` without being recorded (overload):
 * what one socket holds in this process is bounded (maxInflight frames in work, MAX_QUEUED_BYTES waiting,
 * answers up to MAX_SEND_BUFFER_BYTES, beyond which uWS closes the socket of a client that never reads).
 *
 * The token is checked again on every frame and every REAUTH_INTERVAL_MS: once it expired or was revoked
 * the socket reads nothing more, answers the frames already taken, and closes with 4001. Frames it did not
 * answer were not counted.
 */
export const STREAM_PATH = '/v1/usage/stream';
/** Acks waiting in a socket's send buffer before the server stops reading it. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Frames (as text) a socket may have waiting while it takes none; more are refused `unavailable`. */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** A client that reads none of its answers is disconnected once this much waits for it. */
export const MAX_SEND_BUFFER_BYTES = 64 * 1024 * 1024;
export const REAUTH_INTERVAL_MS = 1_000;
export const CLOSE_TOKEN_INVALID = 4001;
export const CLOSE_GOING_AWAY = 1001;

/** One socket's state (uWS user data). */
interface StreamState {
  principal: Principal;
  authorization: string;
  inflight: number;
  /** Frames received while the socket takes none (their text, or undefined for a binary frame). */
  queued: QueuedFrame[];
  queuedBytes: number;
  /** The caller its frames' bytes are charged to in the body budget (the account). */
  caller: string;
  /** No longer reading: the token expired or was revoked, or the server is stopping. */
  closing: { code: number; reason: string } | undefined;
  closed: boolean;
}

type Socket = WebSocket<StreamState>;

/** A frame waiting to be taken: its text (undefined: binary) and the bytes it holds in the body budget. */
interface QueuedFrame {
  text: string | undefined;
  bytes: number;
}

/** A frame's answer, or nothing (a frame taken after the token became invalid is not answered). */
type Answer = string | undefined;

export interface UsageStreamOptions {
  authenticator: Authenticator;
  maxInflight: number;
  log: Logger;
  metrics: Metrics;
  /**
   * The process's request body budget: a frame's bytes are reserved from the account's share from arrival
   * to answer, like a request body's, so an account's sockets hold no more of the process's memory than its
   * requests could (frames past the share are answered `overloaded`).
   */
  budget: BodyBudget;
}

export class UsageStreams {
  private readonly sockets = new Set<Socket>();
  private reauthTimer: NodeJS.Timeout | undefined;
  private readonly frames;
  private idle: (() => void)[] = [];

  constructor(
    private readonly deps: IngressDeps,
    private readonly opts: UsageStreamOptions,
  ) {
    this.frames = opts.metrics.counter(
      'meterline_usage_stream_frames_total',
      'Usage stream (WebSocket) frames by outcome: answered (an ack with per-record results), overflow (too much unread input: answered unavailable), and the code of a frame answered with an error',
      ['outcome'],
    );
    opts.metrics.gauge('meterline_usage_stream_sockets', 'Open usage stream sockets', () => this.sockets.size);
    opts.metrics.gauge(
      'meterline_usage_stream_queued_frames',
      'Usage stream frames waiting to be taken (backpressure)',
      () => this.sum((s) => s.queued.length),
    );
    opts.metrics.gauge('meterline_usage_stream_queued_bytes', 'Bytes of usage stream frames waiting to be taken', () =>
      this.sum((s) => s.queuedBytes),
    );
    opts.metrics.gauge('meterline_usage_stream_inflight_frames', 'Usage stream frames read and not yet answered', () =>
      this.sum((s) => s.inflight),
    );
    opts.metrics.gauge('meterline_usage_stream_buffered_bytes', 'Usage stream acks waiting in send buffers', () => {
      let n = 0;
      for (const ws of this.sockets) n += ws.getBufferedAmount();
      return n;
    });
  }

  start(): void {
    this.reauthTimer = setInterval(() => void this.recheckTokens(), REAUTH_INTERVAL_MS);
    this.reauthTimer.unref();
  }

  /** Stops reading every socket, answers what was taken, then closes them (1001); call before the publisher stops. */
  async stop(): Promise<void> {
    clearInterval(this.reauthTimer);
    for (const ws of this.sockets) this.beginClose(ws, ws.getUserData(), CLOSE_GOING_AWAY, 'server shutting down');
    if (this.sockets.size) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  route(): RouteDef {
    return {
      method: 'GET',
      path: STREAM_PATH,
      auth: 'write',
      body: 'none',
      idempotent: false,
      rateLimit: 'records', // frames count their records against the account's ingest rate
      handler: (ctx) => {
        if (!ctx.upgrading)
          throw new UpgradeRequiredError(
            `${STREAM_PATH} is a WebSocket: send the upgrade handshake (GET with Upgrade: websocket).`,
          );
        const state: StreamState = {
          principal: ctx.principal!,
          authorization: ctx.headers['authorization']!,
          inflight: 0,
          queued: [],
          queuedBytes: 0,
          caller: accountCaller(ctx.principal!.accountId),
          closing: undefined,
          closed: false,
        };
        return reply.upgrade(state);
      },
      websocket: {
        maxPayloadLength: MAX_BODY_BYTES,
        maxBackpressure: MAX_SEND_BUFFER_BYTES,
        closeOnBackpressureLimit: true,
        idleTimeout: 120,
        sendPingsAutomatically: true,
        open: (ws: Socket) => void this.sockets.add(ws),
        message: (ws: Socket, message: ArrayBuffer, isBinary: boolean) => this.onFrame(ws, message, isBinary),
        drain: (ws: Socket) => this.takeQueued(ws, ws.getUserData()),
        close: (ws: Socket) => {
          const s = ws.getUserData();
          s.closed = true;
          this.dropQueued(s); // the client is gone: frames it sent that were never taken are not counted
          this.sockets.delete(ws);
          this.notifyIdle();
        },
      },
      doc: {
        summary:
          'Usage stream (WebSocket): frames {seq, records} in the shape of POST /v1/usage, each answered {seq, accepted, rejected, results} after JetStream stored it',
        tags: ['usage'],
        responses: {
          '101': {
            description:
              'Switching protocols: the socket is open. Closes with 4001 when the token expires or is revoked.',
          },
          '401': problemResponse('missing, invalid or expired bearer token (`unauthorized`)'),
          '403': problemResponse('the token lacks the `write` scope (`insufficient_scope`)'),
          '426': problemResponse('a plain GET without the WebSocket handshake (`upgrade_required`)'),
        },
      },
    };
  }

  private onFrame(ws: Socket, message: ArrayBuffer, isBinary: boolean): void {
    const s = ws.getUserData();
    if (s.closing) return; // not taken, not counted, not answered
    // uWS reuses the frame's memory once this callback returns: decode (copy) it now.
    const text = isBinary ? undefined : Buffer.from(message).toString('utf8');
    const bytes = message.byteLength;
    if (this.opts.budget.reserve(s.caller, bytes)) {
      this.frames.inc({ outcome: 'overloaded' });
      const detail =
        'Too much of what you sent is waiting to be taken in on this server (your share of what it buffers); this frame was not recorded. Read the answers, then send again.';
      ws.send(
        errorAnswer(text === undefined ? null : seqOf(safeParse(text)), 'overloaded', detail, undefined, 1),
        false,
      );
      return;
    }
    if (s.queued.length === 0 && this.canTake(ws, s)) this.take(ws, s, { text, bytes });
    else if (s.queuedBytes + (text?.length ?? 0) <= MAX_QUEUED_BYTES) {
      s.queued.push({ text, bytes });
      s.queuedBytes += text?.length ?? 0;
    } else {
      this.opts.budget.release(s.caller, bytes);
      this.frames.inc({ outcome: 'overflow' });
      const detail =
        'Too many frames are waiting for an answer (read the answers, send fewer at once); this frame was not recorded.';
      ws.send(errorAnswer(text === undefined ? null : seqOf(safeParse(text)), 'unavailable', detail), false);
    }
  }

  private canTake(ws: Socket, s: StreamState): boolean {
    return s.inflight < this.opts.maxInflight && ws.getBufferedAmount() <= MAX_BUFFERED_BYTES;
  }

  private take(ws: Socket, s: StreamState, frame: QueuedFrame): void {
    s.inflight++;
    this.handle(ws, s, frame.text).then((answer) => {
      this.opts.budget.release(s.caller, frame.bytes);
      this.answer(ws, s, answer);
    });
  }

  /** Frames never taken: not counted, not answered, their bytes given back. */
  private dropQueued(s: StreamState): void {
    for (const f of s.queued) this.opts.budget.release(s.caller, f.bytes);
    s.queued.length = 0;
    s.queuedBytes = 0;
  }

  private takeQueued(ws: Socket, s: StreamState): void {
    while (s.queued.length && !s.closing && !s.closed && this.canTake(ws, s)) {
      const frame = s.queued.shift()!;
      s.queuedBytes -= frame.text?.length ?? 0;
      this.take(ws, s, frame);
    }
  }

  private async handle(ws: Socket, s: StreamState, text: string | undefined): Promise<Answer> {
    if (!(await this.tokenValid(ws, s))) return undefined;
    if (text === undefined)
      return this.refuse(null, 'frame', new ValidationError([{ field: '', message: 'frames must be text (JSON)' }]));
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch (err) {
      return errorAnswer(null, 'malformed_json', `The frame is not valid JSON: ${(err as Error).message}`);
    }
    const seq = seqOf(frame);
    try {
      const items = frameRecords(frame);
      await takeRequestRecords(this.deps, s.principal, items.length);
      const rc = recordContext(this.deps, s.principal);
      const meterFor = await itemMeters(this.deps, rc, items);
      const b = await takeCustomerRates(checkBatch(items, meterFor, rc, true), rc);
      if (b.accepted > 0) await this.deps.publisher.submit(usageSubjectOf(this.deps.names, rc), b.rows, b.accepted);
      this.frames.inc({ outcome: 'answered' });
      return `{"seq":${seq},${batchOutcomeJson(b)}}`;
    } catch (err) {
      return this.refuse(seq, 'error', err);
    }
  }

  private refuse(seq: number | null, outcome: string, err: unknown): string {
    this.frames.inc({ outcome });
    if (err instanceof DomainError) return errorAnswer(seq, err.code, err.detail, err.errors, retryAfterOf(err));
    this.opts.log.error({ err }, 'usage stream frame failed');
    return errorAnswer(seq, 'internal_error', 'Something went wrong on our side; nothing was recorded.');
  }

  private answer(ws: Socket, s: StreamState, answer: Answer): void {
    s.inflight--;
    if (s.closed) return this.notifyIdle();
    if (answer !== undefined) ws.cork(() => ws.send(answer, false));
    if (s.closed) return this.notifyIdle(); // the send hit MAX_SEND_BUFFER_BYTES: uWS closed the socket
    if (s.closing) {
      if (s.inflight === 0) {
        s.closed = true;
        ws.cork(() => ws.end(s.closing!.code, s.closing!.reason));
      }
      return;
    }
    this.takeQueued(ws, s);
  }

  /** False (and the socket starts closing with 4001) once the token expired or was revoked. */
  private async tokenValid(ws: Socket, s: StreamState): Promise<boolean> {
    if (s.closing) return false;
    try {
      await this.opts.authenticator.authenticate(s.authorization);
      return true;
    } catch (err) {
      if (!(err instanceof DomainError)) this.opts.log.error({ err }, 'usage stream token check failed');
      this.beginClose(ws, s, CLOSE_TOKEN_INVALID, 'token expired or revoked');
      return false;
    }
  }

  private beginClose(ws: Socket, s: StreamState, code: number, reason: string): void {
    if (s.closing || s.closed) return;
    s.closing = { code, reason };
    this.dropQueued(s);
    if (s.inflight === 0) {
      s.closed = true;
      ws.cork(() => ws.end(code, reason));
    }
  }

  private async recheckTokens(): Promise<void> {
    for (const ws of [...this.sockets]) {
      const s = ws.getUserData();
      if (!s.closed) await this.tokenValid(ws, s);
    }
  }

  private notifyIdle(): void {
    if (this.sockets.size === 0 || this.sum((s) => s.inflight) === 0) for (const f of this.idle.splice(0)) f();
  }

  private sum(of: (s: StreamState) => number): number {
    let n = 0;
    for (const ws of this.sockets) n += of(ws.getUserData());
    return n;
  }
}

/** The caller's `seq` if the frame has a usable one, else null (answers to such frames carry `"seq":null`). */
function seqOf(frame: unknown): number | null {
  const seq = frame !== null && typeof frame === 'object' ? (frame as { seq?: unknown }).seq : undefined;
  return Number.isSafeInteger(seq) ? (seq as number) : null;
}

/** `{seq, records}` → the batch; a single record object counts as a batch of one. */
function frameRecords(frame: unknown): unknown[] {
  if (frame === null || typeof frame !== 'object' || Array.isArray(frame))
    throw new ValidationError([{ field: '', message: 'a frame is an object {seq, records}' }]);
  const { seq, records, ...rest } = frame as { seq?: unknown; records?: unknown };
  const errors: FieldError[] = [];
  if (!Number.isSafeInteger(seq)) errors.push({ field: 'seq', message: 'must be an integer' });
  if (records === undefined) errors.push({ field: 'records', message: 'is required' });
  else if (records === null || typeof records !== 'object')
    errors.push({ field: 'records', message: 'must be an array of records or one record' });
  for (const k of Object.keys(rest)) errors.push({ field: k, message: 'is not a frame field' });
  if (errors.length) throw new ValidationError(errors);
  const items = Array.isArray(records) ? records : [records];
  try {
    checkBatchSize(items);
  } catch (err) {
    if (err instanceof ValidationError)
      throw new ValidationError((err.errors ?? []).map((e) => ({ ...e, field: 'records' })));
    throw err;
  }
  return items;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorAnswer(
  seq: number | null,
  code: string,
  detail: string,
  errors?: FieldError[],
  retryAfter?: number,
): string {
  return JSON.stringify({
    seq,
    error: {
      code,
      detail,
      ...(errors ? { errors } : {}),
      ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}),
    },
  });
}

/** A refusal that says when to come back over HTTP (Retry-After: rate limits, outages) says it in the frame too. */
function retryAfterOf(err: DomainError): number | undefined {
  const seconds = Number(err.headers['Retry-After']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}
