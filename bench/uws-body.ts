import type { HttpResponse } from 'uWebSockets.js';

/** Whether the client went away: a reply written later (after an await) checks it first. */
export interface BodyState {
  aborted: boolean;
}

/**
 * Collects a request's whole body as uWS hands it over (in pieces, in buffers it reuses) and calls `done` with it,
 * unless the client went away first. The bench's bare servers (ceiling-server.ts, publish-floor-server.ts) read
 * bodies alike, so the ceiling and the floor differ only in what they do with one.
 */
export function onWholeBody(res: HttpResponse, done: (body: Buffer, state: BodyState) => void): void {
  const state: BodyState = { aborted: false };
  res.onAborted(() => (state.aborted = true));
  let chunks: Buffer[] | null = null;
  let size = 0;
  res.onData((chunk, isLast) => {
    const copy = Buffer.from(new Uint8Array(chunk)); // uWS reuses the buffer
    (chunks ??= []).push(copy);
    size += copy.length;
    if (isLast && !state.aborted) done(Buffer.concat(chunks, size), state);
  });
}
