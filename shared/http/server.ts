import {
  App,
  us_listen_socket_close,
  us_socket_local_port,
  type TemplatedApp,
  type us_listen_socket,
  type HttpResponse,
  type HttpRequest,
  type us_socket_context_t,
} from 'uWebSockets.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { MethodNotAllowedError, NotFoundError, UnsupportedMediaTypeError } from '../errors.js';
import { RequestContext, type HttpReply } from './context.js';
import type { TrustedProxies } from './client-address.js';
import type { BodyKind, RouteDef } from './route.js';
import { readBody, MAX_BODY_BYTES } from './body.js';
import { accountCaller, addressCaller, BodyBudget, unverifiedCaller } from './body-budget.js';
import { BodyReads } from './body-reads.js';
import { send } from './respond.js';
import { errorReply, isPromise, runPipeline, stepsFor, type MatchedRoute, type RequestStep } from './pipeline.js';

interface PatternEntry {
  paramNames: string[];
  byMethod: Map<string, RouteDef>;
  /** By method, made on a route's first request: what its requests share (no object per request for it). */
  chains: Map<string, Chain>;
}

/** A matched route and the pipeline steps its requests go through (stepsFor). */
interface Chain {
  route: MatchedRoute;
  steps: readonly RequestStep[];
}

export interface HttpServerDeps {
  host: string;
  port: number;
  log: Logger;
  metrics: Metrics;
  /** The steps every matched request passes before its handler, in order (services/roles/api/pipeline.ts). */
  pipeline: readonly RequestStep[];
  /** Request body bytes buffered at once across all requests (MAX_BUFFERED_REQUEST_BYTES); past it → 503 overloaded. */
  maxBufferedBodyBytes?: number;
  /** How much of that one caller (account, or client address) may hold (MAX_BUFFERED_REQUEST_BYTES_PER_CALLER). */
  maxBufferedBodyBytesPerCaller?: number;
  /** A body not complete this long after its request arrived is answered 408 (BODY_READ_TIMEOUT_SECONDS). */
  bodyReadTimeoutMs?: number;
  /** TRUSTED_PROXIES: peers whose X-Forwarded-For names the client (RequestContext.clientAddress). */
  trustedProxies?: TrustedProxies;
  /** The account of an Authorization header verified before (Authenticator.verifiedAccount), if any. */
  verifiedAccount?: (authorization: string | undefined) => string | undefined;
}

const DEFAULT_MAX_BUFFERED_BODY_BYTES = 256 * 1024 * 1024;
const DEFAULT_BODY_READ_TIMEOUT_MS = 10_000;

/**
 * Routing and the wire: matches a route (404/405 itself), checks the media type and starts reading the
 * body before the first await (uWS requires it), runs the pipeline, writes the reply, records metrics.
 */
export class HttpServer {
  readonly app: TemplatedApp = App();
  private readonly patterns = new Map<string, PatternEntry>();
  private listenSocket: us_listen_socket | null = null;
  private boundPort = 0;
  private finalized = false;
  /** Requests between arrival and their reply; stop() waits for them (`drain`). */
  private inFlight = 0;
  private draining = false;
  private idle: (() => void)[] = [];
  readonly bodyBudget: BodyBudget;
  readonly bodyReads: BodyReads;

  constructor(private readonly deps: HttpServerDeps) {
    const max = deps.maxBufferedBodyBytes ?? DEFAULT_MAX_BUFFERED_BODY_BYTES;
    this.bodyBudget = new BodyBudget(max, deps.maxBufferedBodyBytesPerCaller ?? Math.max(MAX_BODY_BYTES, max / 8));
    const failures = deps.metrics.counter(
      'meterline_request_body_failures_total',
      'Request bodies that ended without being read in full, by reason (request_aborted, request_timeout, overloaded, payload_too_large)',
      ['reason'],
    );
    this.bodyReads = new BodyReads(deps.bodyReadTimeoutMs ?? DEFAULT_BODY_READ_TIMEOUT_MS, (reason) =>
      failures.inc({ reason }),
    );
    // The budget counters: all three are 0 on an idle process, whatever its clients did before.
    deps.metrics.gauge(
      'meterline_request_body_reserved_bytes',
      'Request body bytes reserved now (of MAX_BUFFERED_REQUEST_BYTES)',
      () => this.bodyBudget.bytes,
    );
    deps.metrics.gauge(
      'meterline_request_body_callers',
      'Callers (accounts, client addresses) holding reserved request body bytes now',
      () => this.bodyBudget.callers,
    );
    deps.metrics.gauge('meterline_request_bodies_reading', 'Request bodies still arriving', () => this.bodyReads.count);
    deps.metrics.gauge(
      'meterline_http_requests_in_flight',
      'Requests between arrival and answer (a scrape counts itself)',
      () => this.inFlight,
    );
  }

  /** Requests being handled now. */
  get requestsInFlight(): number {
    return this.inFlight;
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
      entry = {
        paramNames: def.path
          .split('/')
          .filter((s) => s.startsWith(':'))
          .map((s) => s.slice(1)),
        byMethod: new Map(),
        chains: new Map(),
      };
      this.patterns.set(def.path, entry);
      const e = entry;
      this.app.any(def.path, (res, req) => this.dispatch(e, def.path, res, req));
    }
    if (entry.byMethod.has(def.method)) throw new Error(`duplicate route ${def.method} ${def.path}`);
    entry.byMethod.set(def.method, def);
    if (def.websocket) {
      const e = entry;
      // uWS tries this before `any` for GETs with the handshake headers; other requests fall through to dispatch.
      this.app.ws(def.path, {
        ...def.websocket,
        upgrade: (res, req, context) => this.upgrade(e, def, res, req, context),
      });
    }
    return this;
  }

  async listen(): Promise<number> {
    this.finalized = true;
    this.app.any('/*', (res, req) => {
      const ctx = new RequestContext(res, req, [], this.deps.trustedProxies);
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
        this.bodyReads.start();
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

  /**
   * Waits until no request is in flight, or `deadlineMs` passed (resolves false then). Meanwhile every reply
   * closes its connection, so kept-alive clients reconnect elsewhere instead of adding work here.
   */
  drain(deadlineMs: number): Promise<boolean> {
    this.draining = true;
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), deadlineMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Closes every connection, including keep-alive ones; bodies still arriving are released (aborted). */
  closeAll(): void {
    this.closeListener();
    this.app.close();
    this.bodyReads.stop();
  }

  private dispatch(entry: PatternEntry, pattern: string, res: HttpResponse, req: HttpRequest): void {
    const ctx = new RequestContext(res, req, entry.paramNames, this.deps.trustedProxies);
    const chain = entry.chains.get(ctx.method) ?? this.chainOf(entry, pattern, ctx.method);
    if (!chain) {
      this.finish(ctx, pattern, new MethodNotAllowedError([...entry.byMethod.keys()]));
      return;
    }
    const route = chain.route.def;
    const kind: BodyKind = route.body ?? (ctx.method === 'GET' || ctx.method === 'DELETE' ? 'none' : 'json');
    if (kind !== 'none') {
      const declared = ctx.headers['content-length'];
      const length = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
      const hasBody = (length !== undefined && length > 0) || ctx.headers['transfer-encoding'] !== undefined;
      if (hasBody) {
        if (!acceptsMediaType(kind, ctx.mediaType)) {
          this.finish(
            ctx,
            pattern,
            new UnsupportedMediaTypeError(
              kind === 'json' ? ['application/json'] : ['application/json', 'application/x-www-form-urlencoded'],
            ),
          );
          return;
        }
        ctx.pendingBody = readBody(res, {
          limit: route.maxBodyBytes ?? MAX_BODY_BYTES,
          declaredLength: length,
          budget: this.bodyBudget,
          caller: this.bodyCaller(ctx, route),
          reads: this.bodyReads,
        });
      }
    }
    this.inFlight++;
    whenAnswered(chain.steps, ctx, chain.route, (outcome) => this.done(ctx, pattern, outcome));
  }

  private chainOf(entry: PatternEntry, pattern: string, method: string): Chain | undefined {
    const def = entry.byMethod.get(method);
    if (!def) return undefined;
    const route = { def, pattern };
    const chain = { route, steps: stepsFor(this.deps.pipeline, route) };
    entry.chains.set(method, chain);
    return chain;
  }

  /**
   * Who a body is charged to from its first byte: on a public route its client address; on another, the account
   * of a token verified before (the authenticate step would charge it within this same tick), else the client
   * address until the token is checked (the pipeline's authenticate step then charges the account). A known
   * token spares the request working out its address, which nothing else on the ingest path uses.
   */
  private bodyCaller(ctx: RequestContext, route: RouteDef): string {
    if (route.auth === 'public') return addressCaller(ctx.clientAddress);
    const account = this.deps.verifiedAccount?.(ctx.headers['authorization']);
    return account !== undefined ? accountCaller(account) : unverifiedCaller(ctx.clientAddress);
  }

  /** A WebSocket handshake: the pipeline decides (401, 403, 429…); `reply.upgrade(data)` opens the socket. */
  private upgrade(
    entry: PatternEntry,
    def: RouteDef,
    res: HttpResponse,
    req: HttpRequest,
    context: us_socket_context_t,
  ): void {
    const ctx = new RequestContext(res, req, entry.paramNames, this.deps.trustedProxies);
    ctx.upgrading = true;
    const key = ctx.headers['sec-websocket-key'] ?? '';
    const protocol = ctx.headers['sec-websocket-protocol'] ?? '';
    const extensions = ctx.headers['sec-websocket-extensions'] ?? '';
    whenAnswered(this.deps.pipeline, ctx, { def, pattern: def.path }, (outcome) => {
      if (!isReply(outcome) || outcome.upgrade === undefined) return this.finish(ctx, def.path, outcome);
      if (ctx.aborted) return;
      res.cork(() => res.upgrade(outcome.upgrade!, key, protocol, extensions, context));
      this.deps.metrics.observeHttp(def.path, ctx.method, 101, (performance.now() - ctx.startedAt) / 1000);
    });
  }

  /** Writes the reply, or the problem response for an error (a pipeline without the problems step still answers). */
  private finish(ctx: RequestContext, pattern: string, outcome: HttpReply | Error | unknown): void {
    const reply = isReply(outcome) ? outcome : errorReply(outcome, ctx, this.deps.log);
    let close = this.draining;
    const body = ctx.pendingBody;
    if (body) {
      // A request answered before its body arrived (refused by auth, a limit, its size, overload) is closed:
      // the rest of what it announced is never read, let alone buffered.
      if (!body.complete) close = true;
      body.settle();
    }
    send(ctx, reply, close);
    this.deps.metrics.observeHttp(pattern, ctx.method, reply.status, (performance.now() - ctx.startedAt) / 1000);
  }

  /** The end of a request that went through the pipeline (counted in `inFlight`). */
  private done(ctx: RequestContext, pattern: string, outcome: HttpReply | Error | unknown): void {
    try {
      this.finish(ctx, pattern, outcome);
    } finally {
      if (--this.inFlight === 0 && this.idle.length) for (const wake of this.idle.splice(0)) wake();
    }
  }
}

/** Runs the pipeline and hands its reply or error to `then`: at once when every step answered synchronously. */
function whenAnswered(
  steps: readonly RequestStep[],
  ctx: RequestContext,
  route: MatchedRoute,
  then: (outcome: HttpReply | unknown) => void,
): void {
  let answer;
  try {
    answer = runPipeline(steps, ctx, route);
  } catch (err) {
    then(err);
    return;
  }
  if (isPromise(answer)) answer.then(then, then);
  else then(answer);
}

function isReply(outcome: unknown): outcome is HttpReply {
  return (
    !!outcome &&
    typeof outcome === 'object' &&
    !(outcome instanceof Error) &&
    typeof (outcome as HttpReply).status === 'number'
  );
}

function isJson(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

function acceptsMediaType(kind: BodyKind, type: string): boolean {
  if (isJson(type)) return true;
  return kind === 'form-or-json' && type === 'application/x-www-form-urlencoded';
}
