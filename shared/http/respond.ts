import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from 'uWebSockets.js';
import type { RequestContext, HttpReply, RateLimitNote } from './context.js';

const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

/**
 * Writes a reply; safe after the client went away and from any tick (it corks). `close` closes the connection
 * after it (besides a reply asking for that itself). Every response of a rate-limited request says where the
 * caller stands (IETF RateLimit header fields), 2xx and errors alike; a 429's own fields (the policy that
 * refused) come first. Written straight to the response: no copy of the reply or its headers per request.
 */
export function send(ctx: RequestContext, reply: HttpReply, close = false): void {
  if (ctx.aborted) return;
  let payload: string | Buffer | undefined;
  let contentType = reply.contentType;
  if (reply.raw !== undefined) payload = reply.raw;
  else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    contentType ??= 'application/json';
  }
  const res = ctx.res;
  const notes = ctx.rateLimits;
  const headers = reply.headers;
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    res.writeHeader('X-Request-Id', ctx.requestId);
    if (contentType) res.writeHeader('Content-Type', contentType);
    if (headers)
      for (const k in headers) if (notes === undefined || !isRateLimitField(k)) res.writeHeader(k, headers[k]!);
    if (notes) writeRateLimitFields(res, headers, notes);
    if (close || reply.closeConnection) res.end(payload ?? '', true);
    else if (payload === undefined) res.end();
    else res.end(payload);
  });
}

function isRateLimitField(name: string): boolean {
  return name === 'RateLimit-Policy' || name === 'RateLimit';
}

/** `RateLimit-Policy` and `RateLimit` of every policy the request counted against, after the reply's own. */
function writeRateLimitFields(
  res: HttpResponse,
  own: Record<string, string> | undefined,
  notes: readonly RateLimitNote[],
): void {
  let policy = notes[0]!.policyHeader;
  let limit = notes[0]!.limitHeader();
  for (let i = 1; i < notes.length; i++) {
    policy += `, ${notes[i]!.policyHeader}`;
    limit += `, ${notes[i]!.limitHeader()}`;
  }
  const ownPolicy = own?.['RateLimit-Policy'];
  const ownLimit = own?.RateLimit;
  res.writeHeader('RateLimit-Policy', ownPolicy ? `${ownPolicy}, ${policy}` : policy);
  res.writeHeader('RateLimit', ownLimit ? `${ownLimit}, ${limit}` : limit);
}
