import t from 'tap';
import { spawn } from 'node:child_process';
import { freePort, isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { authorizeUrl, CHALLENGE, FormBrowser, postForm, registerClient, VERIFIER } from '../fixtures/oauth.js';
import { repoPath } from '../../shared/paths.js';
import { customerShard } from '../../shared/customers/shards.js';

/**
 * Customers over the API (operator mode, docs/design.md §6): an admin token creates, lists, reads and changes
 * customers — each an account of the deployment with its own external id — and gives a customer's people a
 * sign-in (API and CLI) with which they act for that customer only.
 */
t.test('customers API', async (t) => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = await isolatedConfig(t, { PORT: String(port), PUBLIC_BASE_URL: base });
  const api = await startApi(t, config);
  const operator = await createTestAccount(api.infra, { operator: true, name: 'The Operator' });
  const cliMade = await createTestAccount(api.infra, { name: 'Made with the CLI' });
  const admin = (method: string, path: string, body?: unknown) =>
    callJson(api.url, operator.tokens.admin, method, path, body);

  const acme = {
    name: 'Acme Corp',
    external_id: 'acme-42',
    email: 'billing@acme.example',
    billing_address: { line1: '1 Main St', city: 'Springfield', state: 'IL', zip: '62701' },
    metadata: { plan: 'pro', region: 'eu' },
  };

  t.test('POST creates a customer: 201, Location, the full representation', async (t) => {
    const r = await admin('POST', '/v1/customers', acme);
    t.equal(r.status, 201, JSON.stringify(r.body));
    t.match(r.body, { id: /^cus_[0-9A-Za-z]{22}$/, account_id: /^acct_[0-9A-Za-z]{22}$/, ...acme });
    t.same(Object.keys(r.body).sort(), [
      'account_id',
      'address',
      'billing_address',
      'created_at',
      'currency',
      'email',
      'external_id',
      'id',
      'legal_name',
      'locale',
      'metadata',
      'name',
      'net_terms_days',
      'tax_exempt',
      'tax_ids',
    ]);
    t.equal(r.headers.get('location'), `/v1/customers/${r.body.id}`);
    const got = await admin('GET', `/v1/customers/${r.body.id}`);
    t.same(got.body, r.body, 'GET answers what POST answered');
    const minimal = await admin('POST', '/v1/customers', { name: 'Minimal', external_id: 'ü-ñ 日本 #1' });
    t.equal(minimal.status, 201);
    t.match(minimal.body, { email: null, billing_address: null, metadata: {}, external_id: 'ü-ñ 日本 #1' });
    t.equal(minimal.body.currency, null, 'no currency until set or fixed by a first subscription');
  });

  t.test('bad input: 422 naming each field; a duplicate external_id: 409 conflict', async (t) => {
    const empty = await admin('POST', '/v1/customers', {});
    t.equal(empty.status, 422);
    t.same(empty.body.errors.map((e: { field: string }) => e.field).sort(), ['external_id', 'name']);
    const bad = await admin('POST', '/v1/customers', {
      name: '  ',
      external_id: 'tab\there',
      email: 'not-an-email',
      billing_address: { line1: '1 Main', city: 'X', state: 'Y' },
      metadata: { k: 7 },
    });
    t.equal(bad.status, 422);
    const fields = bad.body.errors.map((e: { field: string }) => e.field);
    for (const f of ['billing_address.zip', 'metadata.k']) t.ok(fields.includes(f), `names ${f}: ${fields}`);
    const second = await admin('POST', '/v1/customers', {
      name: '  ',
      external_id: 'tab\there',
      email: 'not-an-email',
    });
    t.same(second.body.errors.map((e: { field: string }) => e.field).sort(), ['email', 'external_id', 'name']);
    t.equal(
      (await admin('POST', '/v1/customers', { name: 'x', external_id: 'x'.repeat(129) })).status,
      422,
      '129 characters',
    );
    t.equal((await admin('POST', '/v1/customers', { name: 'x', external_id: 'y', extra: 1 })).status, 422);
    const dup = await admin('POST', '/v1/customers', { name: 'Another', external_id: acme.external_id });
    t.equal(dup.status, 409);
    t.equal(dup.body.code, 'conflict');
    t.same(dup.body.errors, [{ field: 'external_id', message: 'is already used by another customer' }]);
  });

  t.test('only admin: 403 insufficient_scope for write and read tokens, 401 without one', async (t) => {
    for (const token of [operator.tokens.write, operator.tokens.read, cliMade.tokens.write]) {
      const r = await callJson(api.url, token, 'POST', '/v1/customers', { name: 'n', external_id: 'nope' });
      t.equal(r.status, 403);
      t.equal(r.body.code, 'insufficient_scope');
      t.equal((await callJson(api.url, token, 'GET', '/v1/customers')).status, 403);
    }
    t.equal((await callJson(api.url, undefined, 'GET', '/v1/customers')).status, 401);
  });

  t.test(
    'GET lists every account (CLI-made ones with external_id null), newest first; ?external_id finds one',
    async (t) => {
      const all = await admin('GET', '/v1/customers?per_page=100');
      t.equal(all.status, 200);
      t.equal(all.body.pagination.total, 4, 'the operator, the CLI-made account, Acme and Minimal');
      const cli = all.body.data.find((c: { account_id: string }) => c.account_id === cliMade.accountId);
      t.match(cli, { id: cliMade.customerId, external_id: null, name: 'Made with the CLI' });
      const created = all.body.data.map((c: { created_at: string }) => c.created_at);
      t.same(created, [...created].sort().reverse(), 'newest first');
      const one = await admin('GET', `/v1/customers?external_id=${encodeURIComponent(acme.external_id)}`);
      t.equal(one.body.data.length, 1);
      t.equal(one.body.data[0].external_id, acme.external_id);
      t.equal((await admin('GET', '/v1/customers?external_id=nobody')).body.pagination.total, 0);
      const page2 = await admin('GET', '/v1/customers?per_page=3&page=2');
      t.equal(page2.body.data.length, 1);
      t.equal((await admin('GET', '/v1/customers?per_page=101')).status, 422);
      t.equal((await admin('GET', '/v1/customers/cus_doesnotexist0000000000')).status, 404);
      t.equal(
        (await admin('GET', `/v1/customers/${cliMade.accountId}`)).status,
        404,
        'an account id is not a customer id',
      );
    },
  );

  t.test('PATCH: external_id on a CLI-made account, clearing fields, 409 on a taken external_id', async (t) => {
    const r = await admin('PATCH', `/v1/customers/${cliMade.customerId}`, {
      external_id: 'cli-customer',
      email: 'cli@example.com',
      metadata: { a: 'b' },
    });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.match(r.body, {
      id: cliMade.customerId,
      external_id: 'cli-customer',
      email: 'cli@example.com',
      metadata: { a: 'b' },
    });
    const cleared = await admin('PATCH', `/v1/customers/${cliMade.customerId}`, { email: null, metadata: {} });
    t.match(cleared.body, { external_id: 'cli-customer', email: null, metadata: {} });
    const taken = await admin('PATCH', `/v1/customers/${cliMade.customerId}`, { external_id: acme.external_id });
    t.equal(taken.status, 409);
    t.equal(taken.body.code, 'conflict');
    t.equal((await admin('PATCH', `/v1/customers/${cliMade.customerId}`, {})).status, 422);
    t.equal((await admin('PATCH', `/v1/customers/${cliMade.customerId}`, { external_id: '' })).status, 422);
    t.equal((await admin('PATCH', '/v1/customers/cus_doesnotexist0000000000', { name: 'x' })).status, 404);
    const address = await admin('PATCH', `/v1/customers/${cliMade.customerId}`, {
      billing_address: { line1: '2 Elm', city: 'Shelbyville', state: 'IL', zip: '62565' },
    });
    t.same(address.body.billing_address, { line1: '2 Elm', city: 'Shelbyville', state: 'IL', zip: '62565' });
    const billing = await callJson(api.url, cliMade.tokens.read, 'GET', '/v1/billing');
    t.same(billing.body.billing_address, address.body.billing_address, 'the account’s own billing information');
  });

  t.test('Postgres and JS agree on every account’s registry shard', async (t) => {
    const { rows } = await api.infra.pg.query<{ id: string; s: number }>(
      'SELECT id, customer_registry_shard(id) AS s FROM accounts',
    );
    t.ok(rows.length >= 4);
    t.same(
      rows.map((r) => customerShard(r.id)),
      rows.map((r) => r.s),
    );
  });

  t.test('a sign-in for a customer’s people: API and CLI, and they act for that customer only', async (t) => {
    const customer = (await admin('GET', `/v1/customers?external_id=${acme.external_id}`)).body.data[0];
    const made = await admin('POST', `/v1/customers/${customer.id}/users`, { email: 'ann@acme.example' });
    t.equal(made.status, 201, JSON.stringify(made.body));
    t.match(made.body, { id: /^usr_/, customer_id: customer.id, email: 'ann@acme.example', password: /^[\w-]{24}$/ });
    const dup = await admin('POST', `/v1/customers/${customer.id}/users`, { email: 'ANN@acme.example' });
    t.equal(dup.status, 409);
    t.equal(dup.body.code, 'email_taken');
    t.equal((await admin('POST', `/v1/customers/${customer.id}/users`, { email: 'nope' })).status, 422);
    t.equal(
      (await admin('POST', '/v1/customers/cus_doesnotexist0000000000/users', { email: 'x@y.example' })).status,
      404,
    );

    // The CLI: the same, with a password of the operator's choosing.
    const cli = await new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          repoPath('bin/meterline.js'),
          'customers',
          'sign-in',
          '--customer',
          customer.id,
          '--email',
          'bob@acme.example',
          '--password',
          'bob-password-1',
        ],
        {
          env: {
            ...process.env,
            DATABASE_URL: config.DATABASE_URL,
            NATS_URL: config.NATS_URL,
            CLICKHOUSE_URL: config.CLICKHOUSE_URL,
          },
        },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      child.on('exit', (code) => resolve({ code: code ?? 1, out, err }));
    });
    t.equal(cli.code, 0, cli.err);
    const bob = JSON.parse(cli.out);
    t.match(bob, { id: /^usr_/, customer_id: customer.id, email: 'bob@acme.example' });
    t.notOk('password' in bob, 'a chosen password is never printed');
    const list = await admin('GET', `/v1/customers/${customer.id}/users`);
    t.same(list.body.data.map((u: { email: string }) => u.email).sort(), ['ann@acme.example', 'bob@acme.example']);
    t.notOk(
      list.body.data.some((u: object) => 'password' in u),
      'passwords are never listed',
    );

    // Ann signs in on the OAuth pages (as the console does) and gets a token of Acme's account.
    const app = await registerClient(api.infra, { name: 'Console-like', redirectUris: ['http://127.0.0.1:9/cb'] });
    const url = authorizeUrl(base, {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'read write admin',
      state: 's',
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
    });
    const redirect = await new FormBrowser().authorize(url, {
      email: 'ann@acme.example',
      password: made.body.password,
    });
    const tokens = await postForm(`${base}/oauth/token`, {
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code')!,
      redirect_uri: app.redirectUri,
      client_id: app.clientId,
      ...(app.clientSecret ? { client_secret: app.clientSecret } : {}),
      code_verifier: VERIFIER,
    });
    t.equal(tokens.status, 200, JSON.stringify(tokens.body));
    t.equal(tokens.body.scope, 'read write', 'a customer’s people never get admin');
    const mine = await callJson(api.url, tokens.body.access_token, 'GET', '/v1/billing');
    t.equal(mine.body.customer_id, customer.id, 'the token acts for Acme');
    t.equal((await callJson(api.url, tokens.body.access_token, 'GET', '/v1/customers')).status, 403);
  });
});
