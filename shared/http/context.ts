import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/types.js';
import type { PendingBody } from './body.js';
import { clientAddressOf, NO_TRUSTED_PROXIES, type TrustedProxies } from './client-address.js';

/** Everything a handler may read about the request, captured before the first await. */
export class RequestContext {
  aborted = false;
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly headers: Record<string, string> = {};
  readonly params: Record<string, string> = {};
  readonly requestId: string;
  readonly startedAt = performance.now();
  /** Parsed JSON (or form) body; undefined when the request had none. */
  body: unknown = undefined;
  rawBody: Buffer | undefined = undefined;
  principal: Principal | undefined = undefined;
  /** The body the server started reading when the request arrived; the pipeline's body step awaits it. */
  pendingBody: PendingBody | undefined = undefined;
  /** What the route's input parser made of the request (the pipeline's validation step sets it). */
  input: unknown = undefined;
  /** A WebSocket upgrade request (shared/http/server.ts): the handler may answer `reply.upgrade(data)`. */
  upgrading = false;
  /** The rate policies this request counted against: the response carries their RateLimit fields. */
  rateLimits: RateLimitNote[] | undefined = undefined;
  private queryCache: URLSearchParams | undefined;
  private addressCache: string | undefined;

  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    paramNames: readonly string[],
    /** TRUSTED_PROXIES: whose X-Forwarded-For names the client (shared/http/client-address.ts). */
    private readonly trustedProxies: TrustedProxies = NO_TRUSTED_PROXIES,
  ) {
    this.method = req.getMethod().toUpperCase();
    this.path = req.getUrl();
    this.rawQuery = req.getQuery() ?? '';
    req.forEach((k, v) => {
      // Each proxy may add its own X-Forwarded-For line: all of them, in order, are one list (RFC 9110 §5.3).
      const earlier = k === 'x-forwarded-for' ? this.headers[k] : undefined;
      this.headers[k] = earlier === undefined ? v : `${earlier}, ${v}`;
    });
    for (let i = 0; i < paramNames.length; i++) this.params[paramNames[i]!] = decodeParam(req.getParameter(i) ?? '');
    const given = this.headers['x-request-id'];
    this.requestId = given && given.length <= 200 && /^[\x21-\x7e]+$/.test(given) ? given : randomUUID();
    res.onAborted(() => {
      this.aborted = true;
      // The client went away: a body still arriving never will; its bytes are released now, and the
      // request ends (unanswered) as soon as its pipeline sees the failed read.
      this.pendingBody?.abort();
    });
  }

  get query(): URLSearchParams {
    return (this.queryCache ??= new URLSearchParams(this.rawQuery));
  }

  /**
   * The client's IP address as text (`127.0.0.1`, `::1`), worked out on first use — while the response is
   * still open — and kept: the socket peer, or, when the peer is a trusted proxy (TRUSTED_PROXIES), the
   * address its X-Forwarded-For names (clientAddressOf). Anyone else's X-Forwarded-For is ignored.
   */
  get clientAddress(): string {
    return (this.addressCache ??= clientAddressOf(
      Buffer.from(this.res.getRemoteAddressAsText()).toString('latin1'),
      this.headers['x-forwarded-for'],
      this.trustedProxies,
    ));
  }

  noteRateLimit(status: RateLimitNote): void {
    (this.rateLimits ??= []).push(status);
  }

  header(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }

  /** `application/json` of `Content-Type: application/json; charset=utf-8`, lower case; '' when absent. */
  get mediaType(): string {
    const header = this.headers['content-type'];
    if (!header) return '';
    const semi = header.indexOf(';');
    return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  }
}

function decodeParam(v: string): string {
  if (!v.includes('%')) return v; // the usual id: nothing to decode
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/** One rate policy a request counted against, as its response reports it (shared/limits/rate-limiter.ts). */
export interface RateLimitNote {
  /** `"ingest";q=20000;w=1` */
  readonly policyHeader: string;
  /** `"ingest";r=19900;t=1` */
  limitHeader(): string;
}

export interface HttpReply {
  status: number;
  /** Serialized as JSON unless `raw` is given. */
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Close the connection after this reply (set by the server when the body was not read to its end). */
  closeConnection?: boolean;
  /** Open the WebSocket of an upgrade request with this per-socket data (status 101). */
  upgrade?: object;
}
