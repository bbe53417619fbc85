import type { HttpResponse } from 'uWebSockets.js';
import { OverloadedError, PayloadTooLargeError } from '../errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The request body bytes a process holds at once, across every request (MAX_BUFFERED_REQUEST_BYTES): a
 * flood of slow large bodies gets 503 `overloaded` past it instead of taking the process's memory. A
 * request reserves its declared Content-Length on arrival (chunked ones as chunks come) and gives it back
 * when it is answered.
 */
export class BodyBudget {
  private used = 0;
  constructor(readonly max: number) {}

  get bytes(): number {
    return this.used;
  }

  reserve(n: number): boolean {
    if (this.used + n > this.max) return false;
    this.used += n;
    return true;
  }

  release(n: number): void {
    this.used -= n;
  }
}

/** A body being read: the bytes when complete, and `settle()` to give its budget back when the request is answered. */
export interface PendingBody {
  readonly bytes: Promise<Buffer>;
  /** The bytes once every one arrived (the same as `bytes` resolves to), readable without awaiting. */
  readonly received: Buffer | undefined;
  /** Every byte arrived (false: refused, failed, or still streaming). */
  readonly complete: boolean;
  /** Stops buffering (chunks still arriving are dropped) and releases the reservation; idempotent. */
  settle(): void;
}

/**
 * Collects a request body. Must be called synchronously in the uWS handler, before any await,
 * because uWS delivers data only to an `onData` registered in that first tick. Chunks are copied:
 * uWS reuses the ArrayBuffer after the callback returns.
 */
export function readBody(
  res: HttpResponse,
  limit: number,
  declaredLength: number | undefined,
  budget: BodyBudget,
): PendingBody {
  let reserved = 0;
  let done = false;
  let complete = false;
  let chunks: Buffer[] | null = null;
  let received: Buffer | undefined;
  const settle = () => {
    done = true;
    chunks = null;
    budget.release(reserved);
    reserved = 0;
  };
  const bytes = new Promise<Buffer>((resolve, reject) => {
    const fail = (err: Error) => {
      settle();
      reject(err);
    };
    if (declaredLength !== undefined && declaredLength > limit) return fail(new PayloadTooLargeError(limit));
    if (declaredLength !== undefined) {
      if (!budget.reserve(declaredLength)) return fail(new OverloadedError());
      reserved = declaredLength;
    }
    let size = 0;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > limit) return fail(new PayloadTooLargeError(limit));
      if (size > reserved) {
        if (!budget.reserve(size - reserved)) return fail(new OverloadedError());
        reserved = size;
      }
      if (isLast && chunks === null) {
        complete = true;
        received = Buffer.from(new Uint8Array(chunk)); // one chunk: one copy
        resolve(received);
        return;
      }
      (chunks ??= []).push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        complete = true;
        received = Buffer.concat(chunks, size);
        resolve(received);
      }
    });
  });
  bytes.catch(() => undefined); // the body step reports it; no unhandled rejection when auth fails first
  return {
    bytes,
    get complete() {
      return complete;
    },
    get received() {
      return received;
    },
    settle,
  };
}
