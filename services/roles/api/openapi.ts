import type { RouteModuleFactory } from '../../../shared/http/route.js';
import type { RouteRegistry } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { buildOpenApiDocument } from '../../../shared/http/openapi.js';

/** GET /openapi.json — built on first request from every route the server serves (all modules are registered by then). */
export const openApiModule: RouteModuleFactory = (deps) => ({
  name: 'openapi',
  area: 'control',
  register(server: RouteRegistry) {
    let cached: string | undefined;
    server.route({
      method: 'GET',
      path: '/openapi.json',
      auth: 'public',
      handler: () => {
        cached ??= JSON.stringify(
          buildOpenApiDocument(server.routes, { baseUrl: deps.config.PUBLIC_BASE_URL, version: '1.0.0' }),
        );
        return reply.jsonText(200, cached);
      },
      doc: {
        summary: 'This API as an OpenAPI 3.1 document',
        tags: ['system'],
        responses: { '200': { description: 'OpenAPI 3.1 document' } },
      },
    });
  },
});
