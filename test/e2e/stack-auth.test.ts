import t from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { parseConfig } from '../../shared/config.js';
import { natsServerOptions } from '../../shared/clients/nats.js';
import { repoPath } from '../../shared/paths.js';
import { freePort, testInfra, waitUntil } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { privateStack } from '../fixtures/stack.js';
import { refusesConnections } from '../fixtures/raw-http.js';
import { storedCount } from '../integration/ingest-helpers.js';
import { appendEvent } from '../../services/domain/events/outbox-store.js';

async function pgError(url: string, sql = 'SELECT 1'): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query(sql);
    return 'ok';
  } catch (e) {
    return (e as Error).message;
  } finally {
    await c.end().catch(() => undefined);
  }
}

async function natsConnect(url: string): Promise<NatsConnection> {
  return connect({ ...natsServerOptions(url), reconnect: false });
}

function withoutPassword(url: string, user?: string): string {
  const u = new URL(url);
  u.password = '';
  if (user !== undefined) u.username = user;
  return u.toString();
}

// A private stack (temp dir, free ports; never the shared one) is locked down: passwords generated into
// .data/credentials.json (0600), every server refuses a client without them, the app's Postgres role may
// use rows but not create databases or roles, and each role's NATS user is limited to its own subjects.
t.test('the launched servers refuse clients without credentials; roles get least privilege', async (t) => {
  const { root, up } = await privateStack(t);
  const file = join(root, '.data', 'credentials.json');
  t.equal(statSync(file).mode & 0o777, 0o600, 'credentials.json is readable by its owner only');
  const creds = JSON.parse(readFileSync(file, 'utf8'));
  t.ok(
    up.servers.every((s) => s.secured && !/:[^/@]+@/.test(s.url)),
    'every server is secured; printed URLs carry no password',
  );
  const admin = up.profiles.admin;
  const app = up.profiles.api;

  t.match(await pgError(withoutPassword(admin.DATABASE_URL)), /password/, 'Postgres: no password, no connection');
  t.match(
    await pgError(withoutPassword(admin.DATABASE_URL).replace('postgres@', 'postgres:wrong@')),
    /password authentication failed/,
    'Postgres: a wrong password is refused',
  );
  t.equal(await pgError(admin.DATABASE_URL), 'ok', 'Postgres: the superuser logs in with its password');
  t.match(
    await pgError(app.DATABASE_URL, 'CREATE DATABASE nope'),
    /permission denied/,
    'the app role cannot create databases',
  );
  t.match(await pgError(app.DATABASE_URL, 'CREATE ROLE nope'), /permission denied/, 'the app role cannot create roles');
  t.match(
    await pgError(app.DATABASE_URL, 'CREATE TABLE nope (x int)'),
    /permission denied/,
    'the app role cannot create tables',
  );

  await t.rejects(
    natsConnect(withoutPassword(admin.NATS_URL).replace(/\/\/[^@]*@/, '//')),
    /Authorization Violation/,
    'NATS: no user, no connection',
  );
  await t.rejects(
    natsConnect(withoutPassword(app.NATS_URL, 'api').replace('api@', 'api:wrong@')),
    /Authorization Violation/,
    'NATS: a wrong password is refused',
  );

  const ch = new URL(admin.CLICKHOUSE_URL);
  const anonymous = await fetch(`http://${ch.host}/?query=SELECT%201`);
  t.not(anonymous.status, 200, 'ClickHouse: no password, no query');
  t.match(await anonymous.text(), /Password required|password is incorrect|Authentication failed/);
  const withPassword = await fetch(`http://${ch.host}/?query=SELECT%201`, {
    headers: { authorization: `Basic ${Buffer.from(`default:${creds.clickhouse.default}`).toString('base64')}` },
  });
  t.equal((await withPassword.text()).trim(), '1', 'ClickHouse: the password works');

  // Replicas fetch parts from each other's interserver port: it hands them to the `interserver` user only.
  const interserver = up.servers.find((s) => s.name === 'clickhouse')!.ports!.interserver;
  const partUrl = `http://127.0.0.1:${interserver}/?endpoint=DataPartsExchange:/clickhouse/tables/t/replicas/r&part=all_1_1_0&compress=false`;
  const basic = (user: string, password: string) => ({
    authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  });
  const anonymousFetch = await fetch(partUrl);
  t.equal(anonymousFetch.status, 401, 'ClickHouse interserver port: no credentials, no parts');
  t.match(await anonymousFetch.text(), /requires HTTP Basic/);
  t.equal((await fetch(partUrl, { headers: basic('interserver', 'wrong') })).status, 401, 'a wrong password: none');
  t.not(
    (await fetch(partUrl, { headers: basic('interserver', creds.clickhouse.interserver) })).status,
    401,
    'the replicas’ own credentials pass',
  );
  // nats-server 2.9's monitoring endpoint takes no credentials (it lists users and streams): not opened.
  const monitor = up.servers.find((s) => s.name === 'nats')!.ports!.monitor!;
  t.ok(await refusesConnections(monitor), 'NATS: no monitoring endpoint listening');

  const api = await natsConnect(app.NATS_URL);
  t.teardown(() => api.close());
  const denied: string[] = [];
  void (async () => {
    for await (const s of api.status()) if (s.type === 'error') denied.push(String(s.error));
  })();
  api.publish('events.forged', 'x');
  await api.flush();
  await waitUntil(
    () => denied.some((e) => /Permissions Violation.*events\.forged/i.test(e)),
    'the api user to be denied publishing events',
  );
  const jsm = await jetstreamManager(api);
  await t.rejects(jsm.streams.add({ name: 'FORGED', subjects: ['forged.>'] }), 'the api user cannot create streams');
});

// `meterline up` on that stack: migrations as the owner, each role with its own Postgres and NATS login;
// a usage record goes through api → NATS → consumer → ClickHouse with no permission violation.
t.test('meterline up runs every role with its own credentials', async (t) => {
  const { root, env, up } = await privateStack(t);
  const port = await freePort();
  const SECRET_KEY = randomBytes(32).toString('hex');
  const child = spawn(process.execPath, [repoPath('bin/meterline.js'), 'up'], {
    env: {
      ...env,
      METERLINE_ROOT: root,
      PORT: String(port),
      SECRET_KEY,
      LOG_LEVEL: 'warn',
      USAGE_STREAM_MAX_BYTES: String(64 * 1024 * 1024),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await waitUntil(() => /"base_url"/.test(stdout) || child.exitCode !== null, 'meterline up to print its JSON', 90_000);
  t.match(stdout, /"base_url"/, `meterline up started (stderr: ${stderr.slice(-2000)})`);
  const base = `http://127.0.0.1:${port}`;

  const config = parseConfig({ ...env, ...up.profiles.migrate, SECRET_KEY, PORT: String(port), LOG_LEVEL: 'silent' });
  const infra = await testInfra(t, config);
  const acct = await createTestAccount(infra);
  const W = acct.auth.write.authorization;
  const created = await fetch(`${base}/v1/meters`, {
    method: 'POST',
    headers: { authorization: W, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'calls', unit: 'requests', aggregation: 'sum' }),
  });
  t.equal(created.status, 201, 'the api role writes the meter (Postgres rows and the NATS registry)');
  const meterId = ((await created.json()) as { id: string }).id;
  const posted = await fetch(`${base}/v1/meters/${meterId}/usage`, {
    method: 'POST',
    headers: { authorization: W, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'r-1', value: 3, timestamp: new Date(Date.now() - 60_000).toISOString() }),
  });
  t.equal(posted.status, 202, 'the api role publishes usage');
  await waitUntil(
    async () => (await storedCount(infra, meterId)) === 1,
    'the consumer role to store the record',
    30_000,
    100,
  );
  const client = await infra.pg.connect();
  const eventId = await appendEvent(client, {
    accountId: acct.accountId,
    type: 'subscription.trial_will_end',
    data: { subscription_id: 'sub_stack', trial_end: new Date().toISOString() },
  }).finally(() => client.release());
  await waitUntil(
    async () =>
      (await infra.pg.query('SELECT published_at FROM outbox_events WHERE id = $1', [eventId])).rows[0]?.published_at !=
      null,
    'the dispatcher role to publish the event to the EVENTS stream',
    30_000,
    100,
  );
  t.notMatch(
    readFileSync(join(root, '.data', 'nats', 'nats.log'), 'utf8'),
    /Violation/,
    'no role hit a NATS permission it lacks',
  );

  child.kill('SIGINT');
  t.equal(await exited, 0, 'meterline up exits 0 after SIGINT');
});
