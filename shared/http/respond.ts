import { STATUS_CODES } from 'node:http';
import type { RequestContext, HttpReply } from './context.js';

const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

/** Writes a reply; safe after the client went away and from any tick (it corks). */
export function send(ctx: RequestContext, reply: HttpReply): void {
  if (ctx.aborted) return;
  let payload: string | Buffer | undefined;
  let contentType = reply.contentType;
  if (reply.raw !== undefined) payload = reply.raw;
  else if (reply.body !== undefined) {
    payload = JSON.stringify(reply.body);
    contentType ??= 'application/json';
  }
  const res = ctx.res;
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    res.writeHeader('X-Request-Id', ctx.requestId);
    if (contentType) res.writeHeader('Content-Type', contentType);
    if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]!);
    if (reply.closeConnection) res.end(payload ?? '', true);
    else if (payload === undefined) res.end();
    else res.end(payload);
  });
}
