import t from 'tap';
import { spawn } from 'node:child_process';
import { isolatedConfig } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, webhookBody } from '../fixtures/matrix.js';
import { customerToken } from '../fixtures/operator.js';
import { repoPath } from '../../shared/paths.js';
import { withTransaction } from '../../shared/clients/postgres.js';
import { withAuditActor } from '../../shared/audit/actor.js';
import { purgeAuditEvents } from '../../services/domain/audit/store.js';

/**
 * The audit log (docs/audit.md) on real Postgres: who changed what, written in the change's transaction,
 * secrets redacted, append-only, listed with exact filters, purged after its retention; the CLI's changes too.
 * That every writing route leaves a row is checked route by route in test/integration/scope-matrix.test.ts.
 */

/** The claims of a JWT access token (the test's own, to compare the actor with). */
function claimsOf(token: string): { uid: string; client_id: string; jti: string; sub: string } {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

t.test('audit log', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const pg = api.infra.pg;
  const op = await createTestAccount(api.infra, { operator: true });
  const admin = op.tokens.admin;
  const claims = claimsOf(admin);
  const call = (method: string, path: string, body?: unknown, token = admin) =>
    callJson(api.url, token, method, path, body);
  const auditOf = async (query: string) => {
    const r = await call('GET', `/v1/audit_events?${query}`);
    if (r.status !== 200) throw new Error(`audit list ${query} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  t.test('a create, an update and a delete: actor, request, before and after', async (t) => {
    const created = await fetch(`${api.url}/v1/products`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'x-request-id': 'req-audit-1' },
      body: JSON.stringify({ name: 'Audited', price: 5, currency: 'USD' }),
    });
    t.equal(created.status, 201);
    const product = (await created.json()) as { id: string };
    // Written as JSON text: the digits a float can't hold.
    const patched = await fetch(`${api.url}/v1/products/${product.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: '{"price": 12345678.123456789}',
    });
    t.equal(patched.status, 200, await patched.text());
    t.equal((await call('DELETE', `/v1/products/${product.id}`)).status, 204);

    const page = await auditOf(`resource=${product.id}`);
    t.same(
      page.data.map((e: any) => e.action),
      ['update', 'update', 'create'],
      'newest first: the three changes of the product (a product delete is a soft delete), nothing else',
    );
    const [del, upd, ins] = page.data;
    t.match(ins, {
      resource_type: 'product',
      resource_id: product.id,
      request_id: 'req-audit-1',
      operation: 'POST /v1/products',
      before: null,
      after: { id: product.id, name: 'Audited', price: '5.000000000' },
      actor: {
        type: 'token',
        account_id: op.accountId,
        user_id: claims.uid,
        client_id: claims.client_id,
        token_id: claims.jti,
        address: '127.0.0.1',
        name: null,
      },
    });
    t.equal(upd.operation, 'PATCH /v1/products/:product_id');
    t.equal(upd.before.price, '5.000000000', 'before: the old price, as stored');
    t.equal(upd.after.price, '12345678.123456789', 'after: the new price, every digit (never a float)');
    t.equal(del.operation, 'DELETE /v1/products/:product_id');
    t.equal(del.before.deleted_at, null);
    t.type(del.after.deleted_at, 'string', 'the delete is the row marked deleted');
    // A row really deleted: a test clock.
    const clock = await call('POST', '/v1/test_clocks', { frozen_time: '2026-11-10T00:00:00Z' });
    t.equal((await call('DELETE', `/v1/test_clocks/${clock.body.id}`)).status, 204);
    const [gone] = (await auditOf(`resource=${clock.body.id}`)).data;
    t.match(gone, { action: 'delete', after: null, before: { id: clock.body.id }, resource_type: 'test_clock' });
    t.equal(page.pagination.total, 3);
  });

  t.test('a refused write leaves no audit row: the row commits with the change or not at all', async (t) => {
    const before = (await auditOf('per_page=1')).pagination.total;
    const bad = await call('POST', '/v1/products', { name: 'x', price: -1, currency: 'USD' });
    t.equal(bad.status, 422);
    // A change rolled back after its row was written: the audit row goes with it.
    await t.rejects(
      withAuditActor({ type: 'cli', operation: 'test rollback' }, () =>
        withTransaction(pg, async (c) => {
          await c.query(
            "INSERT INTO tax_rates (id, name, percentage, inclusive) VALUES ('txr_rollback', 'r', 1, true)",
          );
          throw new Error('abort after the write');
        }),
      ),
      /abort after the write/,
    );
    t.equal((await auditOf('per_page=1')).pagination.total, before, 'no new audit event');
    const leftover = await pg.query("SELECT 1 FROM audit_events WHERE resource_id = 'txr_rollback'");
    t.equal(leftover.rowCount, 0);
  });

  t.test('a write outside any request or command (the billing run) is not attributed to anyone', async (t) => {
    const before = (await pg.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n;
    await pg.query("INSERT INTO tax_rates (id, name, percentage, inclusive) VALUES ('txr_system', 's', 1, true)");
    const after = (await pg.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n;
    t.equal(after, before, 'no actor, no audit row (and no stale actor of an earlier request on a pooled connection)');
  });

  t.test('secrets are redacted: webhook secrets, and their rotation shows as changed', async (t) => {
    const body = webhookBody();
    const made = await call('POST', '/v1/webhooks', body);
    t.equal(made.status, 201);
    const rotated = await call('POST', `/v1/webhooks/${made.body.id}/rotate-secret`, {});
    t.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const events = (await auditOf(`resource=${made.body.id}`)).data;
    t.equal(events.length, 2);
    const [rotation, creation] = events;
    t.equal(creation.after.secret_sealed, '[redacted]');
    t.equal(rotation.before.secret_sealed, '[redacted]');
    t.equal(rotation.after.secret_sealed, '[redacted, changed]');
    t.equal(rotation.after.previous_secret_sealed, '[redacted, changed]');
    const raw = JSON.stringify(events);
    t.notOk(raw.includes(body.secret), 'the secret is nowhere in the log');
    const { rows } = await pg.query("SELECT before, after FROM audit_events WHERE resource_type = 'webhook'");
    for (const r of rows)
      for (const side of [r.before, r.after])
        if (side) t.notMatch(String(side.secret_sealed), /^(?!\[redacted)/, 'no sealed secret stored');
  });

  t.test('the CLI: a command is audited with who ran it, never its flags', async (t) => {
    const env = {
      ...process.env,
      DATABASE_URL: config.DATABASE_URL,
      NATS_URL: config.NATS_URL,
      NATS_NAMESPACE: config.NATS_NAMESPACE,
      CLICKHOUSE_URL: config.CLICKHOUSE_URL,
      PUBLIC_BASE_URL: api.url,
      SECRET_KEY: config.SECRET_KEY.toString('hex'),
    };
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          repoPath('bin/meterline.js'),
          'clients',
          'create',
          '--name',
          'Audit app',
          '--redirect-uri',
          'http://127.0.0.1:9/cb',
        ],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let text = '';
      let err = '';
      child.stdout.on('data', (c) => (text += c));
      child.stderr.on('data', (c) => (err += c));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}: ${err}`))));
    });
    const client = JSON.parse(out);
    const events = (await auditOf(`resource=${client.client_id}`)).data;
    t.equal(events.length, 1);
    t.match(events[0], {
      resource_type: 'client',
      action: 'create',
      operation: 'meterline clients create',
      actor: { type: 'cli', user_id: null, token_id: null, name: /.+@.+/ },
      after: { id: client.client_id, name: 'Audit app', secret_hash: '[redacted]' },
    });
    t.notOk(JSON.stringify(events).includes(client.client_secret), 'the client secret is not in the log');
  });

  t.test('append-only: no UPDATE, DELETE or TRUNCATE; the purge deletes only what is past retention', async (t) => {
    const refused = async (sql: string) => {
      const err = await pg.query(sql).then(
        () => undefined,
        (e: { code?: string }) => e,
      );
      t.equal(err?.code, '42501', `${sql} → refused`);
    };
    await refused("UPDATE audit_events SET operation = 'forged'");
    await refused('DELETE FROM audit_events');
    await refused('TRUNCATE audit_events');
    // Even the purge's setting lets no young row go.
    await t.rejects(
      withTransaction(pg, async (c) => {
        await c.query("SELECT set_config('meterline.audit_purge', '1', true)");
        await c.query('DELETE FROM audit_events');
      }),
      { code: '42501' },
    );
    await pg.query(
      `INSERT INTO audit_events (occurred_at, resource_type, resource_id, action, actor_type, operation)
       VALUES (now() - interval '40 days', 'product', 'prod_old', 'create', 'cli', 'meterline old')`,
    );
    const total = (await pg.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n;
    t.equal(await purgeAuditEvents(pg, 30), 1, 'the one event older than 30 days goes');
    t.equal((await pg.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n, total - 1);
    t.equal(await purgeAuditEvents(pg, 30), 0, 'a second purge finds nothing');
  });

  t.test('GET /v1/audit_events: exact filters, paging, admin only', async (t) => {
    const a = await call('POST', '/v1/tax_rates', { name: 'A', percentage: 5, inclusive: true });
    const other = await createTestAccount(api.infra, { operator: true });
    const b = await call('POST', '/v1/tax_rates', { name: 'B', percentage: 6, inclusive: true }, other.tokens.admin);
    t.equal(a.status, 201);
    t.equal(b.status, 201);
    const byA = await auditOf(`actor=${claims.uid}&resource_type=tax_rate`);
    t.ok(byA.data.every((e: any) => e.actor.user_id === claims.uid && e.resource_type === 'tax_rate'));
    t.ok(byA.data.some((e: any) => e.resource_id === a.body.id));
    t.notOk(
      byA.data.some((e: any) => e.resource_id === b.body.id),
      'the other user’s change is not in the filter',
    );
    const otherClaims = claimsOf(other.tokens.admin);
    const byToken = await auditOf(`actor=${otherClaims.jti}`);
    t.same(
      byToken.data.map((e: any) => e.resource_id),
      [b.body.id],
      'by token id: exactly that token’s change',
    );
    t.equal((await auditOf(`actor=${claims.uid.slice(0, -1)}`)).pagination.total, 0, 'a prefix is no match');
    t.equal((await auditOf('resource_type=tax_rat')).pagination.total, 0, 'exact, not a prefix');

    const now = new Date();
    const future = new Date(now.getTime() + 60_000).toISOString();
    t.equal((await auditOf(`from=${encodeURIComponent(future)}`)).pagination.total, 0, 'nothing from the future');
    const all = (await auditOf('per_page=1')).pagination.total;
    t.equal((await auditOf(`to=${encodeURIComponent(future)}`)).pagination.total, all, 'everything before it');
    const page2 = await auditOf('per_page=2&page=2');
    t.equal(page2.data.length, 2);
    t.same(page2.pagination, { page: 2, per_page: 2, total: all });

    const bad = await call('GET', '/v1/audit_events?from=yesterday&to=2020-01-01T00:00:00Z');
    t.equal(bad.status, 422);
    t.same(
      bad.body.errors.map((e: any) => e.field),
      ['from'],
    );
    const backwards = await call('GET', '/v1/audit_events?from=2021-01-01T00:00:00Z&to=2020-01-01T00:00:00Z');
    t.equal(backwards.status, 422);
    t.same(
      backwards.body.errors.map((e: any) => e.field),
      ['to'],
    );
    t.equal((await call('GET', '/v1/audit_events?colour=red')).status, 422, 'an unknown filter is refused');
    const write = await call('GET', '/v1/audit_events', undefined, op.tokens.write);
    t.equal(write.status, 403);
    t.equal(write.body.code, 'insufficient_scope');
    const customer = await customerToken(api.infra, op.accountId, ['read', 'write']);
    t.equal((await call('GET', '/v1/audit_events', undefined, customer)).status, 403);
  });

  t.test('every table is audited or left out on purpose', async (t) => {
    const { rows } = await pg.query<{ table_name: string; audited: boolean }>(
      `SELECT c.relname AS table_name,
              EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid AND g.tgname = 'audit') AS audited
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()`,
    );
    // Why each is left out: docs/audit.md "What is logged".
    const leftOut = new Set([
      'audit_events',
      'schema_migrations',
      'oauth_grants',
      'oauth_authorization_codes',
      'oauth_refresh_tokens',
      'oauth_access_tokens',
      'oauth_sessions',
      'outbox_events',
      'idempotency_keys',
      'webhook_deliveries',
      'invoice_emails',
      'alert_triggers',
      'entitlement_exhaustions',
      'entitlement_table_version',
      'read_cache_versions',
      'document_numbers',
      'sandbox_charges',
      'sandbox_refunds',
      'stripe_customers',
      'stripe_events',
      'usage_identity_owners',
    ]);
    const unaccounted = rows.filter((r) => !r.audited && !leftOut.has(r.table_name)).map((r) => r.table_name);
    t.same(unaccounted, [], 'a new table gets the audit trigger (or a reason to be left out)');
  });
});
