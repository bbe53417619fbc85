import type { Logger } from '../logging.js';
import {
  DomainError,
  ForbiddenError,
  INTERNAL_ERROR,
  MalformedJsonError,
  NotFoundError,
  UnavailableError,
  ValidationError,
} from '../errors.js';
import { isPostgresUnavailable } from '../clients/postgres.js';
import type { AccountProtection, RateTake } from '../limits/protection.js';
import { requireScope, type Authenticator, type Principal } from '../auth/types.js';
import type { HttpReply, RequestContext } from './context.js';
import type { RouteDef } from './route.js';
import { problemReply } from './problems.js';
import { isIdempotentRoute, type IdempotencyGuard } from './idempotency.js';
import { accountCaller } from './body-budget.js';
import { WorkTurns } from './work-turns.js';
import { roleAllows, type PermissionArea } from '../auth/roles.js';
import { withAuditActor, type AuditActor } from '../audit/actor.js';

/**
 * The request pipeline: a route's handler runs inside an ordered list of steps, each of which may answer
 * itself, throw a domain error, or call `next()`. The api's list is in services/roles/api/pipeline.ts; the steps
 * themselves are below.
 *
 * A step answers synchronously when it can (a cached token, an in-memory rate check, a body already read):
 * the hot ingest path then costs one promise for the JetStream ack instead of one per step and await
 * (docs/design.md §11). A step that must wait returns a promise; `next()` may return either.
 */
export type Answer = HttpReply | Promise<HttpReply>;
export type Next = () => Answer;

export interface MatchedRoute {
  def: RouteDef;
  /** The uWS pattern that matched (`/v1/meters/:meter_id`): metrics label and idempotency scope. */
  pattern: string;
}

export interface RequestStep {
  readonly name: string;
  /**
   * False when the step passes every request of `route` straight on, whatever the request (ingest through the
   * audit step): stepsFor leaves it out of that route's chain. `run` still checks for itself.
   */
  appliesTo?(route: MatchedRoute): boolean;
  run(ctx: RequestContext, route: MatchedRoute, next: Next): Answer;
}

/**
 * The steps a route's requests go through: those that may act on them, in order (worked out once per route
 * by the server; a request of the ingest hot path then skips five calls and their `next` closures).
 */
export function stepsFor(steps: readonly RequestStep[], route: MatchedRoute): readonly RequestStep[] {
  return steps.filter((s) => s.appliesTo?.(route) ?? true);
}

/** Runs the steps and the handler; a throw anywhere surfaces as a throw (sync) or a rejection (async). */
export function runPipeline(steps: readonly RequestStep[], ctx: RequestContext, route: MatchedRoute): Answer {
  const at = (i: number): Answer => {
    const step = steps[i];
    return step ? step.run(ctx, route, () => at(i + 1)) : route.def.handler(ctx, ctx.input);
  };
  return at(0);
}

export function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

/** The reply for anything thrown: a domain error's problem document, else a logged, detail-free 500. */
export function errorReply(err: unknown, ctx: RequestContext, log: Logger): HttpReply {
  if (err instanceof DomainError) {
    return problemReply(err, ctx.requestId);
  }
  if (isPostgresUnavailable(err)) {
    log.warn({ err: (err as Error).message, request_id: ctx.requestId, path: ctx.path }, 'postgres unavailable');
    return problemReply(new UnavailableError('The database is unavailable; retry shortly.', 2), ctx.requestId);
  }
  log.error({ err, request_id: ctx.requestId, method: ctx.method, path: ctx.path }, 'unhandled error');
  return problemReply(INTERNAL_ERROR(), ctx.requestId);
}

/**
 * Outermost: every error below becomes its problem response (shared/http/problems.ts has the table). A
 * rejected answer passes through as it is: the server maps it with the same `errorReply` when it settles
 * (shared/http/server.ts), which spares every request a promise here.
 */
export function mapErrorsToProblems(log: Logger): RequestStep {
  return {
    name: 'problems',
    run(ctx, _route, next) {
      try {
        return next();
      } catch (err) {
        return errorReply(err, ctx, log);
      }
    },
  };
}

/** Bearer token → principal, and the route's scope; public routes pass through. */
export function authenticate(authenticator: Authenticator): RequestStep {
  return {
    name: 'authenticate',
    appliesTo: (route) => route.def.auth !== 'public',
    run(ctx, route, next) {
      if (route.def.auth === 'public') return next();
      const needed = route.def.auth;
      const admit = (principal: Principal): Answer => {
        requireScope(principal, needed);
        ctx.principal = principal;
        // From now on the body's bytes count against the account's share of the budget (503 past it).
        ctx.pendingBody?.chargeTo(accountCaller(principal.accountId));
        return next();
      };
      // A token verified before is answered from memory (shared/auth/access-tokens.ts): no promise.
      const principal = authenticator.authenticate(ctx.headers['authorization']);
      return isPromise(principal) ? principal.then(admit) : admit(principal);
    },
  };
}

/** What a route touches (services/roles/api/route-areas.ts): its area, read or written. */
export interface RoutePermission {
  area: PermissionArea;
  access: 'read' | 'write';
}

/**
 * The token's user's operator role (docs/roles.md), beside its scopes: a route outside what the role may do is
 * 403 `role_forbidden`. A route without a permission entry is for owners and admins only. Tokens without a role
 * (a customer's people) pass: their scopes bound them.
 */
export function authorizeRole(permissionOf: (route: MatchedRoute) => RoutePermission | undefined): RequestStep {
  const known = new WeakMap<RouteDef, RoutePermission | null>();
  return {
    name: 'role',
    run(ctx, route, next) {
      const role = ctx.principal?.role;
      if (role === undefined) return next();
      let permission = known.get(route.def);
      if (permission === undefined) known.set(route.def, (permission = permissionOf(route) ?? null));
      const allowed = permission
        ? roleAllows(role, permission.area, permission.access)
        : role === 'owner' || role === 'admin';
      if (!allowed)
        throw new ForbiddenError(
          permission
            ? `The ${role} role may not ${permission.access === 'read' ? 'read' : 'change'} ${permission.area}.`
            : `Only owners and admins may use ${route.def.method} ${route.pattern}.`,
          'role_forbidden',
        );
      return next();
    },
  };
}

/**
 * A write (any method but GET and HEAD; ingest aside) runs as its audit actor (shared/audit/actor.ts): every row it changes is
 * logged with who changed it, in the change's own transaction (docs/audit.md). Reads pay nothing.
 */
export function auditWrites(): RequestStep {
  return {
    name: 'audit',
    appliesTo: (route) => !readsOrIngests(route.def.method, route.def),
    run(ctx, route, next) {
      if (readsOrIngests(ctx.method, route.def)) return next();
      return withAuditActor(auditActorOf(ctx, route), next);
    },
  };
}

/** A read (GET, HEAD) or an ingest route (rated by records: usage goes to NATS, never a Postgres row). */
function readsOrIngests(method: string, def: RouteDef): boolean {
  return method === 'GET' || method === 'HEAD' || def.rateLimit === 'records';
}

function auditActorOf(ctx: RequestContext, route: MatchedRoute): AuditActor {
  const p = ctx.principal;
  const operation = `${route.def.method} ${route.pattern}`;
  const address = ctx.clientAddress;
  if (!p) return { type: 'public', address, request_id: ctx.requestId, operation };
  return {
    type: 'token',
    account_id: p.accountId,
    user_id: p.userId,
    client_id: p.clientId,
    token_id: p.tokenId,
    ...(p.role ? { role: p.role } : {}),
    address,
    request_id: ctx.requestId,
    operation,
  };
}

/**
 * Waits for the body the server started reading, and parses it (JSON, or a form where the route allows); the work
 * from the body on runs in `turns` (one per process: every route of its pipeline shares them).
 */
export function parseBody(turns = new WorkTurns()): RequestStep {
  return {
    name: 'body',
    run(ctx, _route, next) {
      const pending = ctx.pendingBody;
      if (!pending) return next();
      const parse = (raw: Buffer): Answer => {
        ctx.rawBody = raw;
        if (raw.length > 0) ctx.body = parseRaw(raw, ctx.mediaType);
        // Postgres text can't hold NUL (a query with one fails): refuse it here, naming the field. The byte
        // search is cheap; the walk runs only when an escaped NUL is present.
        if (raw.includes(ESCAPED_NUL_JSON) || raw.includes(ESCAPED_NUL_FORM)) {
          const field = fieldWithNul(ctx.body, '');
          if (field !== undefined) throw new ValidationError([{ field, message: 'must not contain NUL characters' }]);
        }
        return next();
      };
      // Read in full already (the pipeline started on the body's last chunk): no promise.
      if (pending.received !== undefined) return parse(pending.received);
      // Still arriving (the usual case: uWS hands over the body after the request's own callback): ONE promise
      // for the rest of the request, settled straight by the handler's answer — not the body's promise, a
      // `then` on it and the adoption of the handler's promise by that one (three promises, four hops).
      // The body arrives in a socket read: its work waits for a turn (work-turns.ts), so that the requests without a
      // body read in the same pass are answered first.
      return new Promise<HttpReply>((resolve, reject) =>
        pending.whenRead(
          (raw) =>
            turns.run(() => {
              try {
                const answer = parse(raw);
                if (isPromise(answer)) answer.then(resolve, reject);
                else resolve(answer);
              } catch (err) {
                reject(err);
              }
            }),
          reject,
        ),
      );
    },
  };
}

/** Per-account request rate on authenticated routes (ingest routes count records in their handler instead). */
export function limitRequestRate(protection: AccountProtection): RequestStep {
  return {
    name: 'rate-limit',
    appliesTo: (route) => route.def.rateLimit !== 'records',
    run(ctx, route, next) {
      if (!ctx.principal || route.def.rateLimit === 'records') return next();
      return afterRate(ctx, protection.takeRequest(ctx.principal.accountId), next);
    },
  };
}

/**
 * Goes on once a rate took its units (at once, or after a lease: shared/limits/rate-limiter.ts), noting the
 * policy for the response's RateLimit fields; a refusal (429) propagates.
 */
export function afterRate<T>(ctx: RequestContext, take: RateTake, then: () => T | Promise<T>): T | Promise<T> {
  if (isPromise(take))
    return take.then((status) => {
      ctx.noteRateLimit(status);
      return then();
    });
  ctx.noteRateLimit(take);
  return then();
}

/** No id holds a NUL character: a path parameter with one names nothing (404); a query value with one is a 422. */
export function rejectNulInUrl(): RequestStep {
  return {
    name: 'nul-in-url',
    run(ctx, _route, next) {
      for (const k in ctx.params) if (ctx.params[k]!.includes('\u0000')) throw new NotFoundError();
      // Decoded, a NUL is `%00` or a raw NUL in the query text: no query, or none of those, nothing to parse.
      if (ctx.rawQuery !== '' && (ctx.rawQuery.includes('%00') || ctx.rawQuery.includes('\u0000'))) {
        for (const [k, v] of ctx.query) {
          if (k.includes('\u0000') || v.includes('\u0000'))
            throw new ValidationError([
              { field: k.replace(/\u0000/g, ''), message: 'must not contain NUL characters' },
            ]);
        }
      }
      return next();
    },
  };
}

const ESCAPED_NUL_JSON = Buffer.from('\\u0000');
const ESCAPED_NUL_FORM = Buffer.from('%00');

/** The path (`card.number`, `items[0].name`) of the first string or key holding a NUL character. */
function fieldWithNul(v: unknown, path: string): string | undefined {
  if (typeof v === 'string') return v.includes('\u0000') ? path : undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const f = fieldWithNul(v[i], `${path}[${i}]`);
      if (f !== undefined) return f;
    }
  } else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      const here = path ? `${path}.${k.replace(/\u0000/g, '')}` : k.replace(/\u0000/g, '');
      if (k.includes('\u0000')) return here;
      const f = fieldWithNul(x, here);
      if (f !== undefined) return f;
    }
  }
  return undefined;
}

/** `Idempotency-Key` on authenticated POSTs: the same request replays its first answer (shared/http/idempotency.ts). */
export function idempotency(guard: IdempotencyGuard): RequestStep {
  return {
    name: 'idempotency',
    appliesTo: (route) => isIdempotentRoute(route.def),
    run(ctx, route, next) {
      return isIdempotentRoute(route.def) ? guard.run(ctx, `${route.def.method} ${route.pattern}`, next) : next();
    },
  };
}

/** The route's input parser (the feature's one validation place) → `ctx.input`; 422 naming each bad field. */
export function validateInput(): RequestStep {
  return {
    name: 'validate',
    appliesTo: (route) => route.def.input !== undefined,
    run(ctx, route, next) {
      if (route.def.input) ctx.input = route.def.input(ctx);
      return next();
    },
  };
}

function parseRaw(raw: Buffer, type: string): unknown {
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

/**
 * A write on this process clears the process's read caches (shared/read-cache.ts) once its handler is done and
 * before its answer goes out, so the same client reading through this process next never sees the state before
 * its write; other processes see it at their next poll. Reads, and ingest (which changes no cached resource),
 * pass through untouched.
 */
export function clearReadCachesAfterWrites(caches: { clearAll(): void }): RequestStep {
  return {
    name: 'read-caches',
    appliesTo: (route) => route.def.method !== 'GET' && route.def.rateLimit !== 'records',
    run(_ctx, route, next) {
      if (route.def.method === 'GET' || route.def.rateLimit === 'records') return next();
      let answer: Answer;
      try {
        answer = next();
      } catch (err) {
        caches.clearAll();
        throw err;
      }
      if (!isPromise(answer)) {
        caches.clearAll();
        return answer;
      }
      return answer.then(
        (r) => {
          caches.clearAll();
          return r;
        },
        (err) => {
          caches.clearAll();
          throw err;
        },
      );
    },
  };
}
