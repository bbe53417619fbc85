import { App, us_listen_socket_close, us_socket_local_port, type TemplatedApp, type us_listen_socket, type HttpResponse, type HttpRequest } from 'uWebSockets.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { ApiError, INTERNAL_ERROR, MalformedJsonError, MethodNotAllowedError, NotFoundError, UnauthorizedError, UnsupportedMediaTypeError } from '../errors.js';
import { requireScope, type Authenticator, type Scope } from '../auth/types.js';
import { RequestContext, type HttpReply } from './context.js';
import { readBody, MAX_BODY_BYTES } from './body.js';
import { send, sendError } from './respond.js';
import { isIdempotentRoute, type IdempotencyGuard } from './idempotency.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type Handler = (ctx: RequestContext) => HttpReply | Promise<HttpReply>;

/**
 * json: application/json bodies only; form-or-json adds application/x-www-form-urlencoded (OAuth);
 * none: the body is not read.
 */
export type BodyKind = 'json' | 'form-or-json' | 'none';

/** OpenAPI description of an operation, built from the same schemas that validate it. */
export interface OperationDoc {
  summary: string;
  tags?: string[];
  requestBody?: object;
  query?: object;
  responses?: Record<string, { description: string; schema?: object; contentType?: string }>;
}

export interface RouteDef {
  method: HttpMethod;
  /** uWS pattern, `:name` for parameters: `/v1/meters/:meter_id/usage`. */
  path: string;
  /** Scope needed; 'public' routes skip authentication. */
  auth: Scope | 'public';
  body?: BodyKind;
  maxBodyBytes?: number;
  handler: Handler;
  doc?: OperationDoc;
  /** Honour `Idempotency-Key` (shared/http/idempotency.ts). Default: true for authenticated POSTs. */
  idempotent?: boolean;
}

interface PatternEntry {
  paramNames: string[];
  byMethod: Map<string, RouteDef>;
}

const rejectAll: Authenticator = {
  authenticate() {
    throw new UnauthorizedError('No authenticator is configured.');
  },
};

export interface HttpServerDeps {
  host: string;
  port: number;
  log: Logger;
  metrics: Metrics;
  authenticator?: Authenticator;
}

export class HttpServer {
  readonly app: TemplatedApp = App();
  private readonly patterns = new Map<string, PatternEntry>();
  private listenSocket: us_listen_socket | null = null;
  private boundPort = 0;
  private authenticator: Authenticator;
  private idempotency: IdempotencyGuard | undefined;
  private finalized = false;

  constructor(private readonly deps: HttpServerDeps) {
    this.authenticator = deps.authenticator ?? rejectAll;
  }

  setAuthenticator(a: Authenticator): void {
    this.authenticator = a;
  }

  /** Installed by the idempotency route module; without it `Idempotency-Key` is ignored. */
  setIdempotencyGuard(g: IdempotencyGuard): void {
    this.idempotency = g;
  }

  get port(): number {
    return this.boundPort;
  }

  get routes(): RouteDef[] {
    return [...this.patterns.values()].flatMap((p) => [...p.byMethod.values()]);
  }

  route(def: RouteDef): this {
    if (this.finalized) throw new Error('routes must be added before listen()');
    let entry = this.patterns.get(def.path);
    if (!entry) {
      entry = { paramNames: def.path.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1)), byMethod: new Map() };
      this.patterns.set(def.path, entry);
      const e = entry;
      this.app.any(def.path, (res, req) => this.dispatch(e, def.path, res, req));
    }
    if (entry.byMethod.has(def.method)) throw new Error(`duplicate route ${def.method} ${def.path}`);
    entry.byMethod.set(def.method, def);
    return this;
  }

  async listen(): Promise<number> {
    this.finalized = true;
    this.app.any('/*', (res, req) => {
      const ctx = new RequestContext(res, req, []);
      this.finish(ctx, 'unmatched', new NotFoundError(`No route matches ${ctx.method} ${ctx.path}.`));
    });
    return new Promise((resolve, reject) => {
      this.app.listen(this.deps.host, this.deps.port, (socket) => {
        if (!socket) {
          reject(new Error(`cannot listen on ${this.deps.host}:${this.deps.port} (in use?)`));
          return;
        }
        this.listenSocket = socket;
        this.boundPort = us_socket_local_port(socket as never);
        resolve(this.boundPort);
      });
    });
  }

  /** Stops accepting connections; in-flight requests finish on their own. */
  closeListener(): void {
    if (this.listenSocket) {
      us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
  }

  /** Closes every connection, including keep-alive ones. */
  closeAll(): void {
    this.closeListener();
    this.app.close();
  }

  private dispatch(entry: PatternEntry, pattern: string, res: HttpResponse, req: HttpRequest): void {
    const ctx = new RequestContext(res, req, entry.paramNames);
    const route = entry.byMethod.get(ctx.method);
    if (!route) {
      this.finish(ctx, pattern, new MethodNotAllowedError([...entry.byMethod.keys()]));
      return;
    }
    const kind: BodyKind = route.body ?? (ctx.method === 'GET' || ctx.method === 'DELETE' ? 'none' : 'json');
    let bodyPromise: Promise<Buffer> | undefined;
    if (kind !== 'none') {
      const declared = ctx.headers['content-length'];
      const length = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
      const hasBody = (length !== undefined && length > 0) || ctx.headers['transfer-encoding'] !== undefined;
      if (hasBody) {
        const type = mediaType(ctx.headers['content-type']);
        if (!acceptsMediaType(kind, type)) {
          this.finish(ctx, pattern, new UnsupportedMediaTypeError(kind === 'json' ? ['application/json'] : ['application/json', 'application/x-www-form-urlencoded']));
          return;
        }
        bodyPromise = readBody(res, route.maxBodyBytes ?? MAX_BODY_BYTES, length);
        bodyPromise.catch(() => undefined); // handled in run(); avoid an unhandled rejection if auth fails first
      }
    }
    void this.run(ctx, pattern, route, bodyPromise);
  }

  private async run(ctx: RequestContext, pattern: string, route: RouteDef, bodyPromise: Promise<Buffer> | undefined): Promise<void> {
    try {
      if (route.auth !== 'public') {
        const principal = await this.authenticator.authenticate(ctx.headers['authorization']);
        requireScope(principal, route.auth);
        ctx.principal = principal;
      }
      if (bodyPromise) {
        const raw = await bodyPromise;
        ctx.rawBody = raw;
        if (raw.length > 0) ctx.body = parseBody(raw, mediaType(ctx.headers['content-type']));
      }
      const reply =
        this.idempotency && isIdempotentRoute(route)
          ? await this.idempotency.run(ctx, `${route.method} ${pattern}`, async () => route.handler(ctx))
          : await route.handler(ctx);
      this.finish(ctx, pattern, reply);
    } catch (err) {
      this.finish(ctx, pattern, err);
    }
  }

  private finish(ctx: RequestContext, pattern: string, outcome: HttpReply | unknown): void {
    let status: number;
    if (outcome instanceof ApiError) {
      status = outcome.status;
      // A body still streaming after a 413 would be read for nothing: close the connection.
      sendError(ctx, outcome, outcome.status === 413);
    } else if (outcome && typeof outcome === 'object' && 'status' in outcome && typeof (outcome as HttpReply).status === 'number' && !(outcome instanceof Error)) {
      status = (outcome as HttpReply).status;
      send(ctx, outcome as HttpReply);
    } else {
      const internal = INTERNAL_ERROR();
      status = 500;
      this.deps.log.error({ err: outcome, request_id: ctx.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
      sendError(ctx, internal);
    }
    this.deps.metrics.observeHttp(pattern, ctx.method, status, (performance.now() - ctx.startedAt) / 1000);
  }
}

function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}

function isJson(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

function acceptsMediaType(kind: BodyKind, type: string): boolean {
  if (isJson(type)) return true;
  return kind === 'form-or-json' && type === 'application/x-www-form-urlencoded';
}

function parseBody(raw: Buffer, type: string): unknown {
  if (type === 'application/x-www-form-urlencoded') {
    const out: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) if (!(k in out)) out[k] = v;
    return out;
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new MalformedJsonError(`The request body is not valid JSON: ${(err as Error).message}`);
  }
}
