import type { HttpResponse } from 'uWebSockets.js';
import { PayloadTooLargeError, RequestAbortedError, RequestTimeoutError, type DomainError } from '../errors.js';
import { overloaded, type BodyBudget } from './body-budget.js';
import type { BodyReads } from './body-reads.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * A body being read: the bytes when complete, and the calls that end it. Whatever ends the request —
 * answered, refused, the client gone, too slow, the server stopping — gives its reserved bytes back exactly
 * once (docs/limits.md, "Request bodies").
 */
export interface PendingBody {
  /** Resolves with the body once every byte arrived; rejects when the read fails (413, 503, 408, aborted). */
  readonly bytes: Promise<Buffer>;
  /** The bytes once every one arrived (the same as `bytes` resolves to), readable without awaiting. */
  readonly received: Buffer | undefined;
  /**
   * `bytes` as callbacks: `onBytes` with the body once every byte arrived, or `onFailure` when the read fails
   * (at once when either already happened). One of them is called, once. For the one caller that continues
   * a request (the pipeline's body step): no promise of its own, no hop through the microtask queue.
   */
  whenRead(onBytes: (b: Buffer) => void, onFailure: (e: Error) => void): void;
  /** Every byte arrived (false: refused, failed, or still streaming). */
  readonly complete: boolean;
  /** Who the reserved bytes are charged to (shared/http/body-budget.ts: a client address, then the account). */
  readonly caller: string;
  /** Charges the bytes to `caller` from now on; past that caller's share the read fails and this throws 503. */
  chargeTo(caller: string): void;
  /** The client went away: an unfinished read fails (nobody is answered) and its bytes are released at once. */
  abort(): void;
  /** The body is overdue (BODY_READ_TIMEOUT_SECONDS): an unfinished read fails with 408. */
  expire(): void;
  /** The request was answered: stops buffering (chunks still arriving are dropped) and releases; idempotent. */
  settle(): void;
}

export interface BodyReadOptions {
  /** Largest body the route takes (413 past it, declared or while streaming). */
  limit: number;
  /** Content-Length, when the request declared one (undefined: chunked). */
  declaredLength: number | undefined;
  budget: BodyBudget;
  /** Who is charged until the request is authenticated (shared/http/body-budget.ts callers). */
  caller: string;
  /** The reads in progress, for the read deadline and the counters. */
  reads: BodyReads;
}

/**
 * Starts collecting a request body. Must be called synchronously in the uWS handler, before any await,
 * because uWS delivers data only to an `onData` registered in that first tick. Chunks are copied: uWS reuses
 * the ArrayBuffer after the callback returns. A declared length is reserved from the budget on arrival (a
 * chunked body's bytes as they come); more than the caller's share or the process's budget → 503 `overloaded`.
 */
export function readBody(res: HttpResponse, o: BodyReadOptions): PendingBody {
  return new BodyRead(res, o);
}

class BodyRead implements PendingBody {
  readonly startedAt = performance.now();
  received: Buffer | undefined = undefined;
  complete = false;
  caller: string;
  private reserved = 0;
  private size = 0;
  private done = false;
  /** The caller's share was spent when the body arrived: the authenticate step's chargeTo answers it (503). */
  private callerRefused: DomainError | undefined;
  private chunks: Buffer[] | null = null;
  /** Made on first ask (`bytes`): a body read in full before the pipeline looks at it, or refused, needs none. */
  private promise: Promise<Buffer> | undefined;
  private failure: DomainError | undefined;
  private resolve: ((b: Buffer) => void) | undefined;
  private reject: ((e: Error) => void) | undefined;
  /** whenRead's callbacks, until the read ends. */
  private onBytes: ((b: Buffer) => void) | undefined;
  private onFailure: ((e: Error) => void) | undefined;

  constructor(
    res: HttpResponse,
    private readonly o: BodyReadOptions,
  ) {
    this.caller = o.caller;
    const declared = o.declaredLength;
    if (declared !== undefined && declared > o.limit) {
      this.fail(new PayloadTooLargeError(o.limit));
      return;
    }
    if (declared !== undefined) {
      const refusal = o.budget.reserve(this.caller, declared);
      if (refusal) {
        const err = overloaded(refusal);
        if (refusal === 'caller') this.callerRefused = err;
        this.fail(err);
        return;
      }
      this.reserved = declared;
    }
    o.reads.add(this);
    res.onData((chunk, isLast) => this.take(chunk, isLast));
  }

  get bytes(): Promise<Buffer> {
    if (this.promise) return this.promise;
    if (this.received !== undefined) return (this.promise = Promise.resolve(this.received));
    if (this.failure) return (this.promise = Promise.reject(this.failure));
    return (this.promise = new Promise<Buffer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    }));
  }

  whenRead(onBytes: (b: Buffer) => void, onFailure: (e: Error) => void): void {
    if (this.received !== undefined) return onBytes(this.received);
    if (this.failure) return onFailure(this.failure);
    this.onBytes = onBytes;
    this.onFailure = onFailure;
  }

  chargeTo(caller: string): void {
    if (caller === this.caller) {
      // Charged to this account from the start (shared/http/server.ts): its spent share is refused where a
      // transfer to it would have been, before the role and rate checks.
      if (this.callerRefused) throw this.callerRefused;
      return;
    }
    const refusal = this.done ? undefined : this.o.budget.transfer(this.caller, caller, this.reserved);
    if (refusal) {
      const err = overloaded(refusal);
      this.fail(err);
      throw err;
    }
    this.caller = caller;
  }

  abort(): void {
    if (!this.complete) this.fail(new RequestAbortedError());
  }

  expire(): void {
    if (!this.complete) this.fail(new RequestTimeoutError(Math.round(this.o.reads.timeoutMs / 1000)));
  }

  settle(): void {
    this.end(RequestAbortedError);
  }

  private fail(err: DomainError): void {
    if (this.done) return;
    this.o.reads.failed(err.code);
    this.end(err);
  }

  /** Gives the reservation back; an unfinished read rejects with `err` (nothing awaits it after an answer). */
  private end(err: DomainError | (new () => DomainError)): void {
    if (this.reserved > 0) this.o.budget.release(this.caller, this.reserved);
    this.reserved = 0;
    this.chunks = null;
    if (this.done) return;
    this.done = true;
    this.o.reads.delete(this);
    if (this.complete) return;
    const failure = (this.failure = typeof err === 'function' ? new err() : err);
    this.reject?.(failure);
    const onFailure = this.onFailure;
    this.onBytes = this.onFailure = undefined;
    onFailure?.(failure);
  }

  private take(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.done) return;
    this.size += chunk.byteLength;
    if (this.size > this.o.limit) return this.fail(new PayloadTooLargeError(this.o.limit));
    if (this.size > this.reserved) {
      const refusal = this.o.budget.reserve(this.caller, this.size - this.reserved);
      if (refusal) return this.fail(overloaded(refusal));
      this.reserved = this.size;
    }
    if (isLast && this.chunks === null) return this.finish(Buffer.from(new Uint8Array(chunk))); // one chunk: one copy
    (this.chunks ??= []).push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) this.finish(Buffer.concat(this.chunks, this.size));
  }

  private finish(body: Buffer): void {
    this.complete = true;
    this.received = body;
    this.chunks = null;
    this.o.reads.delete(this); // arrived: no deadline any more; the bytes stay reserved until the answer
    this.resolve?.(body);
    const onBytes = this.onBytes;
    this.onBytes = this.onFailure = undefined;
    onBytes?.(body);
  }
}
