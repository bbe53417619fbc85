import { randomUUID } from 'node:crypto';
import { RequestContext } from '../../../shared/http/context.js';
import type { RouteDef, RouteRegistry } from '../../../shared/http/route.js';
import { parseJsonExact } from '../../../shared/money/json.js';
import type { PortalVisit } from './access.js';

/**
 * The portal acts through the API's own operations: each page reads, and each action changes, by running the /v1
 * route's input validation and handler as the portal's customer (a read/write principal of its account). So the
 * portal applies exactly the rules a customer's token meets — isolation (another customer's id is 404), portal
 * settings, every business rule — and none is written twice. Answers are parsed with numbers kept as their exact
 * text (money never becomes a float).
 */
/** The served /v1 operations, by `METHOD /pattern` (the very route objects the api serves). */
export type ApiRoutes = (key: string) => RouteDef<any>;

export function servedRoutes(server: RouteRegistry): ApiRoutes {
  const byKey = new Map<string, RouteDef<any>>();
  return (key) => {
    if (byKey.size === 0) for (const r of server.routes) byKey.set(`${r.method} ${r.path}`, r);
    const route = byKey.get(key);
    if (!route) throw new Error(`the portal needs ${key}, which this api does not serve`);
    return route;
  };
}

export async function asCustomer(
  visit: PortalVisit,
  route: RouteDef<any>,
  req: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown } = {},
): Promise<any> {
  const query = new URLSearchParams(req.query ?? {}).toString();
  const raw = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
  const ctx = Object.assign(Object.create(RequestContext.prototype) as RequestContext, {
    aborted: false,
    method: route.method,
    path: route.path,
    rawQuery: query,
    headers: { 'content-type': 'application/json' },
    params: req.params ?? {},
    requestId: randomUUID(),
    body: req.body,
    rawBody: raw,
    principal: visit.principal,
  });
  const input = route.input ? route.input(ctx) : undefined;
  const answer = await route.handler(ctx, input);
  if (answer.status >= 300) throw new Error(`${route.method} ${route.path} answered ${answer.status}`);
  return typeof answer.raw === 'string' && answer.raw ? parseJsonExact(answer.raw) : undefined;
}

/** A number of an answer (parsed exactly) as its text. */
export function numText(v: unknown): string {
  return v === null || v === undefined ? '' : String((v as { text?: string }).text ?? v);
}
