import type { RouteDef } from './route.js';
import { isIdempotentRoute } from './idempotency.js';
import { ProblemSchema } from './problems.js';

/**
 * OpenAPI 3.1 from the routes the server actually serves: every RouteDef becomes an operation, its `doc`
 * supplies the same typebox schemas that validate requests (JSON Schema 2020-12, which 3.1 uses as is).
 * Routes without a `doc` still appear, with a generic response, so the document never hides a route.
 */
export interface OpenApiInfo {
  baseUrl: string;
  version: string;
}

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** `/v1/meters/:meter_id/usage` → `/v1/meters/{meter_id}/usage` */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Plain JSON copy: drops anything a schema library may attach that isn't JSON Schema (symbols, functions). */
const plain = (schema: object): object => JSON.parse(JSON.stringify(schema)) as object;

function operationId(route: RouteDef): string {
  const words = route.path
    .split('/')
    .filter(Boolean)
    .map((s) => (s.startsWith(':') ? 'by_' + s.slice(1) : s.replace(/[^A-Za-z0-9]+/g, '_')));
  // `/console/` is not `/console` (a redirect to it): its id says so.
  if (route.path.length > 1 && route.path.endsWith('/')) words.push('slash');
  return [route.method.toLowerCase(), ...words].join('_');
}

function parameters(route: RouteDef): object[] {
  const out: object[] = [];
  for (const seg of route.path.split('/')) {
    if (seg.startsWith(':')) out.push({ name: seg.slice(1), in: 'path', required: true, schema: { type: 'string' } });
  }
  const q = route.doc?.query as
    | { properties?: Record<string, { description?: string; default?: unknown; style?: string }>; required?: string[] }
    | undefined;
  for (const [name, { style, ...schema }] of Object.entries(q?.properties ?? {})) {
    // A parameter with a default may be left out (the validator fills it in).
    const required = (q?.required?.includes(name) ?? false) && schema.default === undefined;
    // `style` on a property (e.g. deepObject for filter[key]=value) is the parameter's serialization.
    const serialization = style ? { style, explode: true } : {};
    out.push({
      name,
      in: 'query',
      required,
      ...serialization,
      schema: plain(schema),
      ...(schema.description ? { description: schema.description } : {}),
    });
  }
  if (isIdempotentRoute(route)) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Same key and same body within 24 h replay the first response; a different body → 409 idempotency_conflict.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  return out;
}

function responses(route: RouteDef): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [status, r] of Object.entries(route.doc?.responses ?? {})) {
    out[status] = r.schema
      ? { description: r.description, content: { [r.contentType ?? 'application/json']: { schema: plain(r.schema) } } }
      : { description: r.description };
  }
  if (Object.keys(out).length === 0) out.default = { description: 'Response' };
  const add = (status: string, description: string) => {
    out[status] ??= problem(description);
  };
  if (route.doc?.requestBody) {
    add('400', 'Malformed JSON (malformed_json)');
    add('413', 'Body over 1 MiB (payload_too_large)');
    add('415', 'Body is not JSON (unsupported_media_type)');
  }
  if (route.auth !== 'public') {
    add('401', 'Missing or invalid bearer token (unauthorized)');
    add('403', `The token lacks the "${route.auth}" scope (insufficient_scope)`);
  }
  if (route.path.includes('/:')) add('404', 'No such resource in this account (not_found)');
  if (isIdempotentRoute(route)) add('409', 'Idempotency-Key reused with a different request (idempotency_conflict)');
  if (route.doc?.requestBody || route.doc?.query)
    add('422', 'A field is invalid (validation_failed); errors[] names each field');
  return out;
}

function operation(route: RouteDef): object {
  const doc = route.doc;
  const op: Record<string, unknown> = {
    operationId: operationId(route),
    summary: doc?.summary ?? `${route.method} ${openApiPath(route.path)}`,
    tags: doc?.tags ?? [
      route.path
        .split('/')
        .filter(Boolean)
        .find((s) => s !== 'v1' && !s.startsWith(':')) ?? 'default',
    ],
    security: route.auth === 'public' ? [] : [{ oauth2: [route.auth] }],
    responses: responses(route),
  };
  const params = parameters(route);
  if (params.length) op.parameters = params;
  if (doc?.requestBody) {
    const schema = plain(doc.requestBody);
    const content: Record<string, object> = { 'application/json': { schema } };
    if (route.body === 'form-or-json') content['application/x-www-form-urlencoded'] = { schema };
    for (const [mediaType, other] of Object.entries(doc.otherRequestBodies ?? {}))
      content[mediaType] = { schema: plain(other) };
    op.requestBody = { required: true, content };
  }
  return op;
}

export function buildOpenApiDocument(routes: readonly RouteDef[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, object>> = {};
  const sorted = [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of sorted) (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'meterline',
      version: info.version,
      description:
        'Usage metering and billing. Errors are RFC 9457 problem documents; lists are {data, pagination: {page, per_page, total}}, newest first; money is exact decimals.',
    },
    servers: [{ url: info.baseUrl }],
    paths,
    components: {
      schemas: { Problem: plain(ProblemSchema) },
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 authorization code grant (PKCE S256); scopes nest: admin ⊇ write ⊇ read.',
          flows: {
            authorizationCode: {
              authorizationUrl: `${info.baseUrl}/oauth/authorize`,
              tokenUrl: `${info.baseUrl}/oauth/token`,
              refreshUrl: `${info.baseUrl}/oauth/token`,
              scopes: {
                read: 'read every resource',
                write: 'change meters, usage, webhooks, billing, subscriptions',
                admin: 'change the product catalog',
              },
            },
          },
        },
      },
    },
  };
}
