import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { bodyValidator } from '../../shared/http/validation.js';
import { openApiPath } from '../../shared/http/openapi.js';
import { CreateProductBody } from '../../shared/api/products.js';
import { servedOpenApiDocument } from '../../services/docs/served-openapi.js';

t.test('GET /openapi.json', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const res = await fetch(`${api.url}/openapi.json`);
  t.equal(res.status, 200, 'public: no token needed');
  t.equal(res.headers.get('content-type'), 'application/json');
  const doc = (await res.json()) as any;

  t.test('is a valid OpenAPI 3.1 document', async (t) => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    t.ok(result.valid, `validator errors: ${JSON.stringify(result.errors, null, 1)?.slice(0, 2000)}`);
    t.equal(validator.version, '3.1');
    t.equal(doc.openapi, '3.1.0');
    t.same(doc.servers, [{ url: config.PUBLIC_BASE_URL }]);
  });

  t.test('is the document docs/api.md is generated from (npm run docs builds it without a server)', async (t) => {
    // The same routes, schemas and descriptions; only the base URL differs (this api's port vs the default).
    const offline = JSON.stringify(await servedOpenApiDocument());
    t.equal(JSON.stringify(doc).replaceAll(config.PUBLIC_BASE_URL, 'http://127.0.0.1:8080'), offline);
  });

  t.test('its paths and methods are exactly the routes the api serves', async (t) => {
    const served = api.service.server.routes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    t.same(documented, served);
    for (const expected of [
      'GET /v1/products',
      'POST /v1/products',
      'GET /v1/products/{product_id}',
      'PATCH /v1/products/{product_id}',
      'DELETE /v1/products/{product_id}',
      'GET /v1/meters',
      'POST /v1/meters',
      'GET /v1/meters/{meter_id}',
      'PATCH /v1/meters/{meter_id}',
      'GET /v1/subscriptions',
      'POST /v1/subscriptions',
      'GET /v1/subscriptions/{subscription_id}',
      'PATCH /v1/subscriptions/{subscription_id}',
      'GET /openapi.json',
      'GET /healthz',
    ]) {
      t.ok(documented.includes(expected), expected);
    }
  });

  t.test('operations carry parameters, bodies, scopes and unique ids from the route definitions', async (t) => {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(ops)) {
        t.notOk(ids.has(op.operationId), `${method} ${path} operationId unique`);
        ids.add(op.operationId);
        const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
        t.same(declared, names, `${method} ${path} declares its path parameters`);
      }
    }
    const createProduct = doc.paths['/v1/products'].post;
    t.same(
      createProduct.requestBody.content['application/json'].schema,
      JSON.parse(JSON.stringify(CreateProductBody)),
      'the validating schema itself',
    );
    t.same(createProduct.security, [{ oauth2: ['admin'] }]);
    t.ok(createProduct.parameters.some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key'));
    t.ok(createProduct.responses['201'].content['application/json'].schema.properties.price);
    t.ok(createProduct.responses['422']);
    t.same(doc.paths['/v1/products'].get.security, [{ oauth2: ['read'] }]);
    t.same(doc.paths['/v1/meters'].post.security, [{ oauth2: ['write'] }]);
    t.same(doc.paths['/openapi.json'].get.security, []);
    const listMeters = doc.paths['/v1/meters'].get.parameters;
    t.match(
      listMeters.find((p: any) => p.name === 'page'),
      { in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1 } },
    );
    t.match(
      listMeters.find((p: any) => p.name === 'per_page'),
      { in: 'query', schema: { minimum: 1, maximum: 100, default: 20 } },
    );
    t.match(
      listMeters.find((p: any) => p.name === 'status'),
      { in: 'query', schema: { enum: ['active', 'inactive'] } },
    );
    t.same(Object.keys(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes).sort(), [
      'admin',
      'read',
      'write',
    ]);
  });

  t.test('documented response schemas describe the real responses', async (t) => {
    const op = await createTestAccount(api.infra, { operator: true });
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const r = await fetch(api.url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: r.status, body: (await r.json()) as any };
    };
    const product = await call('POST', '/v1/products', op.tokens.admin, {
      name: 'p',
      price: 0.5,
      currency: 'usd',
      pricing: 'metered',
    });
    const meter = await call('POST', '/v1/meters', op.tokens.write, { name: 'm', unit: 'u', aggregation: 'sum' });
    const sub = await call('POST', '/v1/subscriptions', op.tokens.write, {
      items: [{ product_id: product.body.id, meter_id: meter.body.id }],
    });
    const checks: [string, string, string, { status: number; body: unknown }][] = [
      ['/v1/products', 'post', '201', product],
      ['/v1/products', 'get', '200', await call('GET', '/v1/products', op.tokens.read)],
      ['/v1/meters', 'post', '201', meter],
      ['/v1/meters', 'get', '200', await call('GET', '/v1/meters', op.tokens.read)],
      ['/v1/subscriptions', 'post', '201', sub],
      [
        '/v1/subscriptions/{subscription_id}',
        'get',
        '200',
        await call('GET', `/v1/subscriptions/${sub.body.id}`, op.tokens.read),
      ],
      ['/v1/subscriptions', 'get', '200', await call('GET', '/v1/subscriptions', op.tokens.read)],
    ];
    for (const [path, method, status, res] of checks) {
      t.equal(res.status, Number(status), `${method} ${path}`);
      const schema = doc.paths[path][method].responses[status].content['application/json'].schema;
      const v = bodyValidator(schema);
      t.ok(
        v.check(res.body),
        `${method.toUpperCase()} ${path} ${status} matches its schema: ${JSON.stringify(v.check.errors)}`,
      );
    }
    const problem = await call('POST', '/v1/meters', op.tokens.write, { name: 'm' });
    const problemSchema = doc.components.schemas.Problem;
    t.ok(bodyValidator(problemSchema).check(problem.body), 'errors match the Problem schema');
  });
});
