import t from 'tap';
import { spawn } from 'node:child_process';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { basicAuth, postForm } from '../fixtures/oauth.js';
import { operatorUser, roleToken } from '../fixtures/roles.js';
import { repoPath } from '../../shared/paths.js';

/**
 * Operator roles (docs/roles.md) on the whole api: tokens carry their user's role, the users API sets roles under
 * its rules (owners and admins; only owners for owners; never the last owner), a role change is audited and
 * revokes the user's tokens, and a refresh brings the new role. Route × role is the scope matrix's.
 */
function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

t.test('operator roles', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const pg = api.infra.pg;
  const env = {
    ...process.env,
    DATABASE_URL: config.DATABASE_URL,
    NATS_URL: config.NATS_URL,
    NATS_NAMESPACE: config.NATS_NAMESPACE,
    CLICKHOUSE_URL: config.CLICKHOUSE_URL,
    PUBLIC_BASE_URL: config.PUBLIC_BASE_URL,
    SECRET_KEY: config.SECRET_KEY.toString('hex'),
  };
  const cli = (...args: string[]) =>
    new Promise<any>((resolve, reject) => {
      const child = spawn(process.execPath, [repoPath('bin/meterline.js'), ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}: ${err}`))));
    });

  const owner = await createTestAccount(api.infra, { operator: true });
  const client = await cli('clients', 'create', '--name', 'Roles app', '--redirect-uri', 'http://127.0.0.1:9/cb');
  const issued = await cli(
    'tokens',
    'issue',
    '--email',
    owner.email,
    '--client-id',
    client.client_id,
    '--scope',
    'admin',
  );
  t.equal(claimsOf(issued.access_token).role, 'owner', 'a token issued for an existing operator says owner');

  const developer = await operatorUser(pg, owner.accountId, 'developer');
  const adminUser = await operatorUser(pg, owner.accountId, 'admin');
  const billingUser = await operatorUser(pg, owner.accountId, 'billing');
  const tokenOf = (userId: string, role: Parameters<typeof roleToken>[3]) =>
    roleToken(api.infra, owner.accountId, userId, role);
  const asAdmin = await tokenOf(adminUser, 'admin');
  const asBilling = await tokenOf(billingUser, 'billing');
  const call = (token: string, method: string, path: string, body?: unknown) =>
    callJson(api.url, token, method, path, body);

  t.test('GET /v1/users: the operator’s users and roles, to any role (reads are for everyone)', async (t) => {
    const list = await call(asBilling, 'GET', '/v1/users');
    t.equal(list.status, 200);
    const roles = Object.fromEntries(list.body.data.map((u: any) => [u.id, u.role]));
    t.same(roles, {
      [owner.userId]: 'owner',
      [developer]: 'developer',
      [adminUser]: 'admin',
      [billingUser]: 'billing',
    });
    const customer = await createTestAccount(api.infra);
    const theirs = await call(customer.tokens.write, 'GET', '/v1/users');
    t.equal(theirs.status, 403, 'a customer’s token: not an operator');
  });

  t.test('an admin sets roles other than owner; the change is audited', async (t) => {
    const changed = await call(asAdmin, 'PATCH', `/v1/users/${developer}`, { role: 'billing' });
    t.equal(changed.status, 200, JSON.stringify(changed.body));
    t.match(changed.body, { id: developer, role: 'billing' });
    const events = await call(owner.tokens.admin, 'GET', `/v1/audit_events?resource=${developer}`);
    t.equal(events.body.data.length, 1);
    t.match(events.body.data[0], {
      resource_type: 'user',
      action: 'update',
      operation: 'PATCH /v1/users/:user_id',
      before: { role: 'developer', password_hash: '[redacted]' },
      after: { role: 'billing', password_hash: '[redacted]' },
      actor: { user_id: adminUser, role: 'admin' },
    });

    const toOwner = await call(asAdmin, 'PATCH', `/v1/users/${developer}`, { role: 'owner' });
    t.equal(toOwner.status, 403);
    t.equal(toOwner.body.code, 'role_forbidden');
    t.same(
      toOwner.body.errors.map((e: any) => e.field),
      ['role'],
    );
    const demoteOwner = await call(asAdmin, 'PATCH', `/v1/users/${owner.userId}`, { role: 'support' });
    t.equal(demoteOwner.status, 403, 'nor unmake one');
  });

  t.test('billing, support and developer change no roles; bad input is precise', async (t) => {
    const byBilling = await call(asBilling, 'PATCH', `/v1/users/${developer}`, { role: 'support' });
    t.equal(byBilling.status, 403);
    t.equal(byBilling.body.code, 'role_forbidden');
    const unknownRole = await call(asAdmin, 'PATCH', `/v1/users/${developer}`, { role: 'root' });
    t.equal(unknownRole.status, 422);
    t.same(
      unknownRole.body.errors.map((e: any) => e.field),
      ['role'],
    );
    t.equal((await call(asAdmin, 'PATCH', '/v1/users/usr_nobody', { role: 'support' })).status, 404);
    const other = await createTestAccount(api.infra, { operator: true });
    const theirs = await call(asAdmin, 'PATCH', `/v1/users/${other.userId}`, { role: 'support' });
    t.equal(theirs.status, 404, 'another account’s user is unknown here');
    t.equal((await pg.query('SELECT role FROM users WHERE id = $1', [other.userId])).rows[0].role, 'owner');
  });

  t.test('an owner makes an owner; the last owner stays one', async (t) => {
    const made = await call(issued.access_token, 'PATCH', `/v1/users/${developer}`, { role: 'owner' });
    t.equal(made.status, 200, JSON.stringify(made.body));
    const second = await tokenOf(developer, 'owner');
    // The first owner steps down: its tokens are revoked with the change.
    const down = await call(second, 'PATCH', `/v1/users/${owner.userId}`, { role: 'admin' });
    t.equal(down.status, 200, JSON.stringify(down.body));
    await waitUntil(
      async () => (await call(issued.access_token, 'GET', '/v1/users')).status === 401,
      'the demoted user’s token to be revoked',
    );
    const refreshed = await postForm(
      `${api.url}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: issued.refresh_token },
      { authorization: basicAuth(client.client_id, client.client_secret) },
    );
    t.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    t.equal(claimsOf(refreshed.body.access_token).role, 'admin', 'a refresh carries the new role');
    const last = await call(second, 'PATCH', `/v1/users/${developer}`, { role: 'admin' });
    t.equal(last.status, 409);
    t.equal(last.body.code, 'last_owner');
    t.same(
      last.body.errors.map((e: any) => e.field),
      ['role'],
    );
    t.equal((await pg.query('SELECT role FROM users WHERE id = $1', [developer])).rows[0].role, 'owner');
    const asNewAdmin = refreshed.body.access_token;
    t.equal(
      (await call(asNewAdmin, 'PATCH', `/v1/users/${billingUser}`, { role: 'support' })).status,
      200,
      'the former owner, now admin, still manages other roles',
    );
  });

  t.test('a role bounds an admin-scoped token: support reads, changes nothing', async (t) => {
    const support = await tokenOf(await operatorUser(pg, owner.accountId, 'support'), 'support');
    t.equal((await call(support, 'GET', '/v1/products')).status, 200);
    const write = await call(support, 'POST', '/v1/products', { name: 'x', price: 1, currency: 'USD' });
    t.equal(write.status, 403);
    t.match(write.body, { code: 'role_forbidden', detail: 'The support role may not change catalog.' });
    const dev = await tokenOf(await operatorUser(pg, owner.accountId, 'developer'), 'developer');
    t.equal((await call(dev, 'GET', '/v1/billing/invoices')).status, 403, 'developer: no money, not even to read');
    t.equal((await call(dev, 'POST', '/v1/meters', { name: 'm', unit: 'u', aggregation: 'sum' })).status, 201);
  });
});
