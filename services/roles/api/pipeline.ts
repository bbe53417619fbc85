import type { AccountProtection } from '../../../shared/limits/protection.js';
import type { Infra } from '../../../shared/infra.js';
import type { Authenticator } from '../../../shared/auth/types.js';
import { PgIdempotencyStore } from '../../../shared/http/idempotency.js';
import { routePermission } from './route-areas.js';
import type { ReadCaches } from '../../../shared/read-cache.js';
import {
  auditWrites,
  authenticate,
  authorizeRole,
  clearReadCachesAfterWrites,
  idempotency,
  limitRequestRate,
  mapErrorsToProblems,
  parseBody,
  rejectNulInUrl,
  validateInput,
  type RequestStep,
} from '../../../shared/http/pipeline.js';

/**
 * Every api request passes these steps, in this order, before its handler runs (the server has already
 * matched the route, answered 404/405/415 itself, and started reading the body).
 */
export function apiPipeline(
  infra: Infra,
  authenticator: Authenticator,
  protection: AccountProtection,
  reads: ReadCaches,
): RequestStep[] {
  return [
    // Outermost, so it sees every failure below: domain error → problem+json; anything else → logged 500.
    mapErrorsToProblems(infra.log),
    // Before the body is looked at: a caller without a token learns nothing about the payload's validity.
    authenticate(authenticator),
    // The token's user's operator role beside its scopes (403 role_forbidden): one table, route-areas.ts.
    authorizeRole((route) => routePermission(route.def.method, route.pattern)),
    // Per-account request rate (429 + Retry-After); ingest routes count records in their handler instead.
    limitRequestRate(protection),
    // A NUL in an id or a query value: 404/422 here, never a failed Postgres query (500).
    rejectNulInUrl(),
    // JSON (or form) → ctx.body; 400 malformed_json, 413 while streaming.
    parseBody(),
    // A write runs as its audit actor: every row it changes is logged in the change's transaction (docs/audit.md).
    auditWrites(),
    // A write clears this process's read caches before its answer (outside idempotency: a replay clears too).
    clearReadCachesAfterWrites(reads),
    // Wraps validation and the handler, so a 422 or a 201 replays byte for byte for the same key.
    idempotency(new PgIdempotencyStore(infra.pg, { log: infra.log, secret: infra.config.SECRET_KEY })),
    // The route's input parser (the feature's input.ts): typed input or 422 naming each field.
    validateInput(),
  ];
}
