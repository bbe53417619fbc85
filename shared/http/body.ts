import type { HttpResponse } from 'uWebSockets.js';
import { PayloadTooLargeError } from '../errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Collects a request body. Must be called synchronously in the uWS handler, before any await,
 * because uWS delivers data only to an `onData` registered in that first tick. Chunks are copied:
 * uWS reuses the ArrayBuffer after the callback returns.
 */
export function readBody(res: HttpResponse, limit: number, declaredLength: number | undefined): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredLength !== undefined && declaredLength > limit) {
      reject(new PayloadTooLargeError(limit));
      return;
    }
    let chunks: Buffer[] | null = null;
    let size = 0;
    let failed = false;
    res.onData((chunk, isLast) => {
      if (failed) return;
      size += chunk.byteLength;
      if (size > limit) {
        failed = true;
        reject(new PayloadTooLargeError(limit));
        return;
      }
      if (isLast && chunks === null) {
        resolve(Buffer.from(new Uint8Array(chunk))); // one chunk: one copy
        return;
      }
      (chunks ??= []).push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) resolve(Buffer.concat(chunks, size));
    });
  });
}
