import type { AccountProtection } from '../limits/protection.js';
import type { Scope, Authenticator } from '../auth/types.js';
import type { Infra } from '../infra.js';
import type { WebSocketBehavior } from 'uWebSockets.js';
import type { HttpReply, RequestContext } from './context.js';
import type { BodyBudget } from './body-budget.js';
import type { ReadCaches } from '../read-cache.js';

/**
 * The types a feature needs to describe its routes, in a leaf file: route files and feature modules import
 * these (never the api service that mounts them), so no import runs back up the tree.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

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
  /** Bodies of other JSON media types the route also takes (e.g. application/cloudevents+json), by media type. */
  otherRequestBodies?: Record<string, object>;
  query?: object;
  responses?: Record<string, { description: string; schema?: object; contentType?: string }>;
}

/**
 * One HTTP operation. `I` is what the feature's input parser makes of the request (query, body, params):
 * the pipeline's validation step runs `input` and hands the result to `handler`.
 */
export interface RouteDef<I = unknown> {
  method: HttpMethod;
  /** uWS pattern, `:name` for parameters: `/v1/meters/:meter_id/usage`. */
  path: string;
  /** Scope needed; 'public' routes skip authentication. */
  auth: Scope | 'public';
  body?: BodyKind;
  maxBodyBytes?: number;
  /** The feature's validation (its `input.ts`): the typed input, or a ValidationError naming each field. */
  input?(ctx: RequestContext): I;
  handler(ctx: RequestContext, input: I): HttpReply | Promise<HttpReply>;
  doc?: OperationDoc;
  /** Honour `Idempotency-Key` (shared/http/idempotency.ts). Default: true for authenticated POSTs. */
  idempotent?: boolean;
  /**
   * How the account's rate counts this route: `requests` (default, the pipeline's step, one per request)
   * or `records` (ingest: the handler counts the usage records of the body instead).
   */
  rateLimit?: 'requests' | 'records';
  /**
   * A WebSocket endpoint (GET): the upgrade request passes the pipeline like any request (authentication,
   * scope), and a handler answering `reply.upgrade(data)` opens the socket these handlers then serve.
   * Without the handshake the request reaches the same handler with `ctx.upgrading` false.
   */
  websocket?: Omit<WebSocketBehavior<any>, 'upgrade'>;
}

/** Where a module puts its routes (the HTTP server); `routes` lists every route registered so far. */
export interface RouteRegistry {
  route(def: RouteDef): unknown;
  readonly routes: readonly RouteDef[];
}

/** What every route module gets: the infrastructure bag plus the shared token check. */
export interface ApiDeps extends Infra {
  authenticator: Authenticator;
  /** Per-account limits and rates (shared/limits/protection.ts). */
  protection: AccountProtection;
  /** The process's request body budget (shared/http/body-budget.ts): what else holds request bytes charges it too. */
  bodyBudget: BodyBudget;
  /** The process's control-plane read caches (shared/read-cache.ts): rarely changing resources from memory. */
  reads: ReadCaches;
}

/**
 * A slice of the api: registers its routes, and may own background work (a KV watch, a publisher, a
 * periodic purge) that starts before the listener opens and stops after it closed.
 */
export interface RouteModule {
  readonly name: string;
  /** ingress = usage hot path; control = everything else. API_ROUTES picks which are mounted. */
  readonly area: 'ingress' | 'control';
  register(server: RouteRegistry): void;
  start?(): Promise<void>;
  /** Called after the listener closed: flush what is pending. */
  stop?(): Promise<void>;
  health?(): Promise<{ ok: boolean; detail?: string }>;
}

export type RouteModuleFactory = (deps: ApiDeps) => RouteModule | Promise<RouteModule>;
