import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Who is changing things right now, for the audit log (docs/audit.md). The api's pipeline (a write request) and
 * the CLI (a command) run their work inside `withAuditActor`; the Postgres pool (shared/clients/postgres.ts) hands
 * the actor to every connection it checks out in that work, as the `meterline.audit_actor` setting the audit
 * trigger reads (infra/migrations/postgres/741_audit_log.sql). Work outside one — the billing run, the dispatcher —
 * has no actor and writes no audit rows.
 */
export interface AuditActor {
  type: 'token' | 'cli' | 'public';
  account_id?: string;
  user_id?: string;
  client_id?: string;
  /** The access token's id (jti). */
  token_id?: string;
  role?: string;
  /** The client's IP address. */
  address?: string;
  /** CLI: `user@host`. */
  name?: string;
  request_id?: string;
  /** `POST /v1/products`, `meterline clients create`. */
  operation: string;
}

const current = new AsyncLocalStorage<string>();

/** Runs `fn` (and everything it awaits or starts) as `actor`. */
export function withAuditActor<T>(actor: AuditActor, fn: () => T): T {
  return current.run(JSON.stringify(actor), fn);
}

/**
 * Runs `fn` as no one: background work (a periodic task first started, or armed, during a request) must not carry
 * that request's actor into every later run.
 */
export function withoutAuditActor<T>(fn: () => T): T {
  return current.exit(fn);
}

/** The actor of the work running now, as the setting's text; '' outside any. */
export function currentAuditSetting(): string {
  return current.getStore() ?? '';
}
