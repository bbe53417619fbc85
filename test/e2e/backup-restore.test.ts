import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { repoPath } from '../../shared/paths.js';
import { billingWorld, work } from '../fixtures/billing.js';
import { createTestAccount } from '../fixtures/auth.js';
import { freePort, roleProcessEnv, waitUntil } from '../fixtures/env.js';
import { callJson, readUsageUntil } from '../fixtures/matrix.js';
import { startRoleProcess } from '../fixtures/role-process.js';
import { privateStack } from '../fixtures/stack.js';
import { reapIfKilled } from '../fixtures/reaper.js';
import { startReceiver } from '../fixtures/webhook-receiver.js';
import { apiAnswers, meterline, pathsOf, storedRecords } from './backup-helpers.js';

// docs/backups.md, as an operator runs it: a stack with data of every kind (accounts, a catalog, subscriptions,
// invoices charged and their PDFs, a credit note, usage with a correction, webhooks and their deliveries, an
// Idempotency-Key) takes `meterline backup create` while ingest runs; a second stack on other ports, empty,
// gets `meterline backup restore` and `meterline up`. Then every API answer is equal, every record acknowledged
// before the backup point is counted exactly once, the only difference is records acknowledged after it (listed),
// and nothing is billed or charged twice. The RPO/RTO figures are printed.

// Two stacks' worth of servers start here: on a loaded 2-core machine that alone can take minutes.
t.setTimeout(20 * 60_000);

const HOOK_SECRET = 'whsec_backup_restore_0123456789';

const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

t.test('a backup taken under ingest restores into an empty stack: same answers, exact usage', async (t) => {
  const w = await billingWorld(t);
  const source = roleProcessEnv(w.config);
  await startRoleProcess(t, 'dispatcher', w.config);
  const receiver = await startReceiver(t);
  const a = await createTestAccount(w.api.infra, { name: 'Restored Co' });
  const b = await createTestAccount(w.api.infra, { name: 'Second Co' });
  await w.card(a);
  await w.card(b);
  const calls = await w.meter(a, 'Calls', 'requests', 'counter', 'sum');
  const live = await w.meter(a, 'Live', 'requests', 'counter', 'sum');
  const seats = await w.meter(b, 'Seats', 'seats', 'gauge', 'max');
  const plan = await w.product('Plan', 10, 'USD');
  const metered = await w.product('API calls', 0.01, 'USD', 'metered');
  const seat = await w.product('Seats', 2.5, 'EUR', 'metered');
  const hook = await w.made(a.tokens.write, 'POST', '/v1/webhooks', {
    url: receiver.url('/hook'),
    events: ['invoice.created', 'invoice.paid', 'credit_note.created'],
    secret: HOOK_SECRET,
  });
  const subA = await w.made(a.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: plan }, { product_id: metered, meter_id: calls }],
  });
  const subB = await w.made(b.tokens.write, 'POST', '/v1/subscriptions', {
    items: [{ product_id: seat, meter_id: seats }],
  });
  await w.backdate(subA.id, '2026-10-05T00:00:00Z');
  await w.backdate(subB.id, '2026-10-05T00:00:00Z');
  await w.usage(a, calls, [
    { value: 900, timestamp: '2026-10-20T00:00:00Z', id: 'oct-good' },
    { value: 300, timestamp: '2026-10-21T12:00:00Z', id: 'oct-wrong' },
    { value: 1, timestamp: '2026-10-22T08:00:00Z', id: 'oct-one' },
  ]);
  await w.usage(b, seats, [
    { value: 3, timestamp: '2026-10-10T00:00:00Z', id: 'seats-1' },
    { value: 7, timestamp: '2026-10-11T00:00:00Z', id: 'seats-2' },
  ]);
  const billed = await w.run('2026-11-01T01:00:00Z');
  t.equal(billed.code, 0, `October billed: ${billed.stderr.slice(-300)}`);
  const invoicesOf = async (token: string) =>
    (await w.made(token, 'GET', '/v1/billing/invoices?per_page=100')).data as any[];
  const [invA] = await invoicesOf(a.tokens.read);
  const [invB] = await invoicesOf(b.tokens.read);
  t.match(invA, { status: 'paid', amount: 22.01, currency: 'USD' }, 'October: 10 + 1,201 calls × 0.01');
  t.match(invB, { status: 'paid', amount: 17.5, currency: 'EUR' }, 'October: 7 seats × 2.50');
  const chargesBefore = { a: await w.charges(invA.id), b: await w.charges(invB.id) };
  t.same(chargesBefore, { a: 1, b: 1 }, 'one charge per invoice');
  // A correction after the invoice, and a credit note (a partial refund of a paid invoice).
  const corrected = await fetch(`${w.api.url}/v1/meters/${calls}/usage/corrections`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${a.tokens.write}`,
      'content-type': 'application/json',
      'idempotency-key': 'fix',
    },
    body: JSON.stringify({ cancel: ['oct-wrong'] }),
  });
  t.equal(corrected.status, 201);
  await w.made(w.operator.tokens.admin, 'POST', `/v1/billing/invoices/${invA.id}/credit-notes`, {
    amount: 2,
    reason: 'goodwill',
  });
  // A create with an Idempotency-Key: after the restore, a client's retry of it is answered, not done again.
  const keyed = async (base: string) => {
    const res = await fetch(`${base}/v1/meters`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.tokens.write}`,
        'content-type': 'application/json',
        'idempotency-key': 'meter-once',
      },
      body: JSON.stringify({ name: 'Keyed', unit: 'call', aggregation: 'sum' }),
    });
    return { status: res.status, body: (await res.json()) as { id: string } };
  };
  const firstKeyed = await keyed(w.api.url);
  t.equal(firstKeyed.status, 201);
  await waitUntil(
    async () => {
      const d = await callJson(w.api.url, a.tokens.read, 'GET', `/v1/webhooks/${hook.id}/deliveries`);
      return d.body.data?.length === 3 && d.body.data.every((x: any) => x.status === 'succeeded');
    },
    'the invoice and credit note events delivered',
    60_000,
    200,
  );
  await waitUntil(
    async () =>
      (
        await callJson(
          w.api.url,
          a.tokens.read,
          'GET',
          `/v1/meters/${calls}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
        )
      ).body.value === 901,
    'October at 901 after the cancellation',
  );

  // Ingest keeps running through the backup: each acknowledged record with the time its 202 arrived.
  const acked = new Map<string, number>();
  let ingesting = true;
  let n = 0;
  const ingest = (async () => {
    while (ingesting) {
      const batch = Array.from({ length: 20 }, () => ({
        value: 1,
        timestamp: new Date().toISOString(),
        id: `live-${++n}`,
      }));
      const r = await callJson(w.api.url, a.tokens.write, 'POST', `/v1/meters/${live}/usage`, batch);
      if (r.status === 202) for (const x of batch) acked.set(x.id, Date.now());
    }
  })();
  await waitUntil(() => acked.size >= 200, 'ingest under way', 60_000, 50);
  const dir = path.join(await mkdtemp(path.join(tmpdir(), 'meterline-backup-')), 'backup');
  t.teardown(() => rm(path.dirname(dir), { recursive: true, force: true }));
  reapIfKilled({ roots: [path.dirname(dir)] });
  const backup = await meterline(['backup', 'create', '--out', dir], { ...process.env, ...source, LOG_LEVEL: 'warn' });
  t.equal(backup.code, 0, `backup create: ${backup.stderr.slice(-1500)}`);
  const loadAtBackup = load();
  await waitUntil(() => acked.size >= 200 + 400, 'ingest after the backup', 60_000, 50);
  ingesting = false;
  await ingest;
  const point = Date.parse(backup.json.backup_point);
  const ackedBefore = [...acked].filter(([, at]) => at < point).map(([id]) => id);
  const ackedAfter = [...acked].filter(([, at]) => at >= point).map(([id]) => id);
  t.ok(ackedBefore.length > 0 && ackedAfter.length > 0, 'records acknowledged on both sides of the backup point');
  await waitUntil(
    async () =>
      (await storedRecords(w.config.CLICKHOUSE_URL, w.config.CLICKHOUSE_DATABASE, live)).values.size === acked.size,
    'the source to count every acknowledged record',
    120_000,
    200,
  );
  const paths = {
    a: await pathsOf(w.api.url, a.tokens.read, [calls, live]),
    b: await pathsOf(w.api.url, b.tokens.read, [seats]),
  };
  const before = {
    a: await apiAnswers(w.api.url, a.tokens.read, paths.a),
    b: await apiAnswers(w.api.url, b.tokens.read, paths.b),
    operator: await apiAnswers(w.api.url, w.operator.tokens.admin, ['/v1/products', '/v1/billing/credit-notes']),
  };
  t.ok(paths.a.length > 30, `${paths.a.length + paths.b.length} answers to compare`);

  // The second stack: empty, on other ports, its own secret.key (replaced by the backup's).
  const target = await privateStack(t);
  const targetEnv: NodeJS.ProcessEnv = { ...target.env, METERLINE_ROOT: target.root, LOG_LEVEL: 'warn' };
  delete targetEnv.SECRET_KEY;
  const restoreStarted = Date.now();
  const restored = await meterline(['backup', 'restore', '--from', dir], targetEnv);
  t.equal(restored.code, 0, `backup restore: ${restored.stderr.slice(-2000)}`);
  const port = await freePort();
  const up = spawn(process.execPath, [repoPath('bin/meterline.js'), 'up'], {
    env: {
      ...targetEnv,
      PORT: String(port),
      PUBLIC_BASE_URL: w.config.PUBLIC_BASE_URL,
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      PASSWORD_SCRYPT_LOG2_N: '10',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let upErr = '';
  up.stderr.on('data', (d) => (upErr = (upErr + d).slice(-4000)));
  const upExited = new Promise((resolve) => up.once('exit', resolve));
  t.teardown(async () => {
    if (up.exitCode === null && up.signalCode === null) {
      up.kill('SIGINT');
      const timer = setTimeout(() => up.kill('SIGKILL'), 30_000);
      await upExited;
      clearTimeout(timer);
    }
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200,
    `the restored stack's api ready (${upErr})`,
    180_000,
    200,
  );
  const stored = () => storedRecords(target.up.clickhouseUrl, targetEnv.CLICKHOUSE_DATABASE ?? 'meterline', live);
  await waitUntil(
    async () => {
      const rows = (await stored()).values;
      return ackedBefore.every((id) => rows.has(id)) || up.exitCode !== null;
    },
    'every record acknowledged before the backup point counted in the restored stack',
    180_000,
    200,
  );
  const rtoMs = Date.now() - restoreStarted;

  // Usage: exactly the records acknowledged before the point, plus some of those after it; each once.
  const got = await stored();
  const missing = ackedBefore.filter((id) => !got.values.has(id));
  t.same(missing, [], 'no record acknowledged before the backup point is lost');
  const extra = [...got.values.keys()].filter((id) => !acked.has(id));
  t.same(extra, [], 'no record the source never acknowledged');
  const notRestored = ackedAfter.filter((id) => !got.values.has(id));
  t.ok(
    notRestored.every((id) => (acked.get(id) ?? 0) >= point),
    `the only difference: ${notRestored.length} of ${ackedAfter.length} records acknowledged after the backup point ` +
      `(${notRestored.slice(0, 5).join(', ')}${notRestored.length > 5 ? ', …' : ''})`,
  );
  t.ok(
    [...got.values.values()].every((v) => Number(v) === 1),
    'every value as sent',
  );
  // The restored consumer's last insert counts in GET usage once its partials are stored (docs/usage.md "Partials").
  const { usage: liveUsage } = await readUsageUntil(
    base,
    a.tokens.read,
    `/v1/meters/${live}/usage?window=none`,
    got.values.size,
    'the usage query to count every restored record',
  );
  t.equal(liveUsage.body.count, got.values.size, 'the usage query counts each restored record once');
  t.equal(Number(liveUsage.body.value), got.values.size);

  // Every other answer is equal: same tokens (the restored signing keys under the backup's SECRET_KEY).
  const after = {
    a: await apiAnswers(base, a.tokens.read, paths.a),
    b: await apiAnswers(base, b.tokens.read, paths.b),
    operator: await apiAnswers(base, w.operator.tokens.admin, ['/v1/products', '/v1/billing/credit-notes']),
  };
  for (const who of ['a', 'b', 'operator'] as const)
    for (const p of Object.keys(before[who]))
      if (!p.startsWith(`/v1/meters/${live}`))
        t.same(after[who][p], before[who][p], `${who} ${p} equal after the restore`);

  // Nothing twice: the retried create is answered from the restored key, October is not billed again.
  const retried = await keyed(base);
  t.same(retried, firstKeyed, 'the Idempotency-Key replays the original answer');
  const rerun = await meterline(['billing', 'run', '--now', '2026-11-01T01:00:00Z'], targetEnv);
  t.equal(rerun.code, 0, rerun.stderr.slice(-500));
  t.same(
    work(rerun.json),
    { invoices: [], payments: [] },
    "re-running October's close on the restored stack does nothing",
  );
  t.same(await invoicesOf(a.tokens.read).then((x) => x.length), 1);
  const charges = await meterline(['billing', 'run', '--now', '2026-11-02T01:00:00Z'], targetEnv);
  t.same(work(charges.json), { invoices: [], payments: [] }, 'no invoice and no payment retried');
  t.equal(receiver.requests.length, 3, 'no webhook delivered twice');
  // The restored webhook secret (sealed under the backup's SECRET_KEY) signs the restored stack's deliveries.
  await callJson(base, w.operator.tokens.admin, 'POST', `/v1/billing/invoices/${invA.id}/credit-notes`, {
    amount: 1,
    reason: 'goodwill',
  });
  await waitUntil(() => receiver.requests.length === 4, 'the new credit note delivered', 60_000, 100);
  const fresh = receiver.requests[3]!;
  t.doesNotThrow(
    () =>
      new StandardWebhook(Buffer.from(HOOK_SECRET).toString('base64')).verify(
        fresh.body.toString(),
        fresh.headers as Record<string, string>,
      ),
    "the restored stack signs with the webhook's secret",
  );

  const report = restored.json;
  t.comment(
    `backup under ingest: ${backup.json.duration_ms} ms (${backup.json.usage_messages} USAGE messages in flight), ` +
      `load ${loadAtBackup}; restore command ${restored.ms} ms (steps ${JSON.stringify(report.steps)}); ` +
      `restore → api ready and every record counted (RTO) ${rtoMs} ms, load ${load()}; ` +
      `records acknowledged after the point: ${ackedAfter.length}, of them not in the backup: ${notRestored.length}`,
  );
});
