import type { HttpServer } from '../../shared/http/server.js';
import type { Infra } from '../../shared/infra.js';
import type { Authenticator } from '../../shared/auth/types.js';

/** What every route module gets: the infrastructure bag plus the shared token check. */
export interface ApiDeps extends Infra {
  authenticator: Authenticator;
}

/**
 * A slice of the api: registers its routes, and may own background work (a KV watch, a publisher)
 * that starts before the listener opens and stops after it closed.
 */
export interface RouteModule {
  readonly name: string;
  /** ingress = usage hot path; control = everything else. API_ROUTES picks which are mounted. */
  readonly area: 'ingress' | 'control';
  register(server: HttpServer): void;
  start?(): Promise<void>;
  /** Called after the listener closed: flush what is pending. */
  stop?(): Promise<void>;
  health?(): Promise<{ ok: boolean; detail?: string }>;
}

export type RouteModuleFactory = (deps: ApiDeps) => RouteModule | Promise<RouteModule>;
