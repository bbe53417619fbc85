import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { parquetReadObjects } from 'hyparquet';
import { billingWorld } from '../fixtures/billing.js';
import { roleProcessEnv, waitUntil } from '../fixtures/env.js';
import { repoPath } from '../../shared/paths.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startTestS3 } from '../fixtures/s3.js';
import { Decimal } from '../../shared/money/decimal.js';
import { EXPORT_COLUMNS } from '../../services/domain/exports/columns.js';
import { dayIn } from '../fixtures/calendar.js';

/**
 * Exports (docs/exports.md) against the real api, Postgres, ClickHouse and an S3 simulator process, written by
 * `meterline exports run` in its own process (what the billing role runs): every kind as
 * CSV to a local directory; usage and invoices as Parquet to S3, read back by hyparquet (an independent reader)
 * and compared with the CSV; a re-run writes the same bytes; a crash mid-upload leaves no object visible and the
 * next run completes it byte-identical; journal entries balance per document; export.completed; schedules add
 * each window once; bad input is a precise 422; only the operator exports.
 */

/** RFC 4180 CSV → rows of named fields (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): Record<string, string>[] {
  const records: string[][] = [];
  let field = '';
  let row: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      records.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  const [header, ...rest] = records;
  return rest.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])));
}

t.test('exports', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'meterline-exports-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const s3 = await startTestS3(t);
  const w = await billingWorld(t, { EXPORTS_LOCAL_ROOT: root, ...s3.env });
  const pg = w.api.infra.pg;
  const admin = w.operator.tokens.admin;
  const cliEnv = {
    ...process.env,
    ...roleProcessEnv(w.config),
    EXPORTS_LOCAL_ROOT: root,
    ...s3.env,
    LOG_LEVEL: 'warn',
    NODE_NO_WARNINGS: '1',
  };
  /** Small pages by default: every export here spans several pages (and Parquet row groups). */
  const spawnExports = (args: string[] = [], pageRows = 2) =>
    spawn(
      process.execPath,
      [repoPath('bin/meterline.js'), 'exports', 'run', '--page-rows', String(pageRows), ...args],
      {
        env: cliEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  /** `meterline exports run` to its end: its exit code and JSON answer. */
  const runExports = async (args: string[] = [], pageRows = 2) => {
    const child = spawnExports(args, pageRows);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    return { code, json: out ? JSON.parse(out) : null, stderr: err };
  };
  const post = (p: string, body: unknown, token = admin) => callJson(w.api.url, token, 'POST', p, body);
  const get = (p: string, token = admin) => callJson(w.api.url, token, 'GET', p);

  // A customer billed for last month (paid by card), refunded in part; usage records in last month
  // (test/fixtures/calendar.ts: a subscription made through the api begins in the real month).
  const customer = await createTestAccount(w.api.infra, { name: 'Export, "Quoted" Co' });
  const plan = await w.product('Plan', 49.99, 'USD');
  await w.card(customer);
  const sub = await w.made(customer.tokens.write, 'POST', '/v1/subscriptions', { items: [{ product_id: plan }] });
  await w.backdate(sub.id, dayIn(-1, 5));
  const run = await w.run(dayIn(0, 1, 1));
  t.equal(run.code, 0, run.stderr);
  const invoice = (await w.made(customer.tokens.read, 'GET', '/v1/billing/invoices')).data[0];
  t.equal(invoice.status, 'paid', 'last month’s invoice was charged');
  const refund = await w.made(admin, 'POST', `/v1/billing/invoices/${invoice.id}/credit-notes`, {
    amount: 20,
    reason: 'Refund, partly',
  });
  const meter = await w.meter(customer, 'Calls', 'calls', 'counter', 'sum');
  const records = Array.from({ length: 5 }, (_, i) => ({
    id: `r${i}`,
    value: i + 0.25,
    timestamp: dayIn(-1, 10 + i, 12),
    ...(i === 2 ? { dimensions: { region: 'eu, west' } } : {}),
  }));
  await w.usage(customer, meter, records);
  // Documents are timed when made (the invoice on this month's first, the credit note now): the window covers both.
  const docWindow = { from: dayIn(-1, 1), to: new Date(Date.now() + 3_600_000).toISOString() };
  const usageWindow = { from: dayIn(-1, 1), to: dayIn(0, 1) };

  const exportAndRun = async (body: Record<string, unknown>, pageRows = 2) => {
    const made = await post('/v1/exports', body);
    t.equal(made.status, 201, JSON.stringify(made.body));
    t.equal(made.body.status, 'pending');
    const ran = await runExports([], pageRows);
    t.equal(ran.code, 0, ran.stderr);
    const done = await get(`/v1/exports/${made.body.id}`);
    t.equal(done.body.status, 'completed', JSON.stringify(done.body));
    return done.body;
  };

  await t.test('bad requests are precise 422s; a customer cannot export', async (t) => {
    const base = { kind: 'invoices', format: 'csv', ...docWindow, destination: { type: 'local', path: 'x' } };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, to: docWindow.from }, 'to'],
      [{ ...base, from: 'yesterday' }, 'from'],
      [{ ...base, to: new Date(Date.now() + 400 * 86_400_000).toISOString() }, 'to'],
      [{ ...base, destination: { type: 'local', path: '../etc' } }, 'destination.path'],
      [{ ...base, destination: { type: 'local', path: '/etc' } }, 'destination.path'],
      [{ ...base, destination: { type: 's3', bucket: 'b', prefix: 'x' } }, 'destination.bucket'],
      [{ ...base, kind: 'everything' }, 'kind'],
    ];
    for (const [body, field] of cases) {
      const r = await post('/v1/exports', body);
      t.equal(r.status, 422, `${field}: ${JSON.stringify(body)}`);
      t.ok(
        r.body.errors?.some((e: { field: string }) => e.field === field || e.field.startsWith(`${field}`)),
        `names ${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    for (const scope of ['read', 'write'] as const) {
      const r = await post('/v1/exports', base, customer.tokens[scope]);
      t.equal(r.status, 403, `a customer's ${scope} token`);
      t.equal((await get('/v1/exports', customer.tokens[scope])).status, 403);
    }
    const { rows } = await pg.query('SELECT count(*)::int AS n FROM exports');
    t.equal(rows[0].n, 0, 'nothing was written');
  });

  await t.test('every kind as CSV to a local directory, columns as documented', async (t) => {
    for (const kind of Object.keys(EXPORT_COLUMNS) as (keyof typeof EXPORT_COLUMNS)[]) {
      const window = kind === 'usage' ? usageWindow : docWindow;
      const e = await exportAndRun({
        kind,
        format: 'csv',
        ...window,
        destination: { type: 'local', path: 'acct/csv' },
      });
      t.match(e.object_key, new RegExp(`^acct/csv/${kind}/${kind}_\\d{8}T\\d{6}Z_\\d{8}T\\d{6}Z\\.csv$`));
      const text = await readFile(path.join(root, e.object_key), 'utf8');
      t.equal(text.split('\r\n')[0], EXPORT_COLUMNS[kind].map((c) => c.name).join(','), `${kind}: header`);
      const rows = parseCsv(text);
      t.equal(e.row_count, rows.length, `${kind}: row_count`);
      t.equal(e.byte_count, Buffer.byteLength(text), `${kind}: byte_count`);
      if (kind === 'usage') {
        const mine = rows.filter((r) => r.meter_id === meter);
        t.same(
          mine.map((r) => [r.record_id, r.value, r.timestamp, r.customer_id]),
          records.map((r) => [r.id, String(r.value), r.timestamp, customer.customerId]),
        );
        t.equal(mine[2]!.dimensions, JSON.stringify({ region: 'eu, west' }), 'a comma inside a field is quoted');
      }
      if (kind === 'invoices') {
        const inv = rows.find((r) => r.invoice_id === invoice.id)!;
        t.equal(inv.amount, '49.99');
        t.equal(inv.status, 'paid');
        t.equal(inv.number, invoice.number);
      }
      if (kind === 'customers') {
        t.equal(rows.find((r) => r.account_id === customer.accountId)?.name, 'Export, "Quoted" Co');
      }
      if (kind === 'payments') {
        const p = rows.find((r) => r.invoice_id === invoice.id)!;
        t.same([p.status, p.amount, p.currency], ['succeeded', '49.99', 'USD']);
      }
      if (kind === 'credit_notes') {
        const cn = rows.find((r) => r.credit_note_id === refund.id)!;
        t.same([cn.type, cn.amount, cn.refund_status], ['refund', '20', 'succeeded']);
      }
      if (kind === 'journal_entries') {
        const byDoc = new Map<string, { debit: Decimal; credit: Decimal }>();
        for (const r of rows) {
          const doc = `${r.document_type}:${r.document_id}`;
          const d = byDoc.get(doc) ?? { debit: new Decimal(0), credit: new Decimal(0) };
          byDoc.set(doc, { debit: d.debit.plus(r.debit!), credit: d.credit.plus(r.credit!) });
        }
        for (const [doc, { debit, credit }] of byDoc) t.ok(debit.eq(credit), `${doc} balances: ${debit} = ${credit}`);
        const types = new Set(rows.map((r) => r.document_type));
        t.same([...types].sort(), ['credit_note', 'invoice', 'payment', 'refund']);
        const ar = rows.find((r) => r.document_id === invoice.id && r.ledger_account === 'accounts_receivable')!;
        t.equal(ar.debit, '49.99');
      }
    }
    const events = await pg.query(`SELECT data FROM outbox_events WHERE type = 'export.completed' ORDER BY seq`);
    t.equal(events.rows.length, Object.keys(EXPORT_COLUMNS).length, 'one export.completed per export');
    t.match(events.rows[0].data, { kind: 'usage', format: 'csv', destination: 'local', row_count: Number });
    const leftovers = (await readdir(path.join(root, 'acct/csv/usage'))).filter((f) => f.startsWith('.'));
    t.same(leftovers, [], 'no temporary files stay behind');
  });

  await t.test('Parquet to S3 reads back with hyparquet as the CSV rows; a re-run is byte-identical', async (t) => {
    for (const kind of ['usage', 'invoices', 'journal_entries'] as const) {
      const window = kind === 'usage' ? usageWindow : docWindow;
      const dest = { type: 's3', bucket: s3.bucket, prefix: 'warehouse' };
      const pq = await exportAndRun({ kind, format: 'parquet', ...window, destination: dest });
      const csv = await exportAndRun({ kind, format: 'csv', ...window, destination: dest });
      const bytes = await s3.get(pq.object_key);
      t.equal(bytes.subarray(0, 4).toString(), 'PAR1');
      const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
      const fromParquet = await parquetReadObjects({ file });
      const fromCsv = parseCsv((await s3.get(csv.object_key)).toString('utf8'));
      t.equal(fromParquet.length, fromCsv.length, `${kind}: as many rows`);
      const asText = (v: unknown) =>
        v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : String(v);
      t.same(
        fromParquet.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, asText(v)]))),
        fromCsv,
        `${kind}: the same values`,
      );
      const again = await exportAndRun({ kind, format: 'parquet', ...window, destination: dest });
      t.equal(again.object_key, pq.object_key, 'the same object name');
      t.equal(again.sha256, pq.sha256, 'the same bytes');
      t.ok((await s3.get(again.object_key)).equals(bytes));
    }
  });

  await t.test('a crash (SIGKILL) mid-upload leaves no object visible; the next run completes it whole', async (t) => {
    // Enough records that a run at 2 rows a page is still uploading when it is killed.
    const many = Array.from({ length: 3000 }, (_, i) => ({
      id: `bulk${i}`,
      value: 1,
      timestamp: new Date(Date.parse(dayIn(-1, 20)) + i * 1000).toISOString(),
    }));
    for (let i = 0; i < many.length; i += 1000) await w.usage(customer, meter, many.slice(i, i + 1000));
    const body = {
      kind: 'usage',
      format: 'parquet',
      ...usageWindow,
      destination: { type: 's3', bucket: s3.bucket, prefix: 'crash' },
    };
    const made = await post('/v1/exports', body);
    const child = spawnExports([], 100);
    const closed = new Promise((resolve) => child.on('close', resolve));
    await waitUntil(async () => (await s3.uploadsInProgress()).length > 0, 'the export to start its upload');
    child.kill('SIGKILL');
    await closed;
    t.same(await s3.keys('crash/'), [], 'killed mid-export: nothing under the final name');
    t.equal((await s3.uploadsInProgress()).length, 1, 'only an unfinished multipart upload, which S3 never shows');
    const killed = (await get(`/v1/exports/${made.body.id}`)).body;
    t.match(killed, { status: 'running', attempts: 1, object_key: null });
    const again = await runExports([], 100);
    t.same(again.json.completed, [], 'a claim that has not lapsed is left to its runner');
    // The claim lapses (CLAIM_SECONDS after the crash): the next run takes the export again.
    await pg.query(`UPDATE exports SET claimed_until = now() - interval '1 second' WHERE id = $1`, [made.body.id]);
    const resumed = await runExports([], 100);
    t.same(resumed.json.completed, [made.body.id]);
    const done = (await get(`/v1/exports/${made.body.id}`)).body;
    t.match(done, { status: 'completed', attempts: 2, row_count: 3005 });
    const reference = await exportAndRun(body, 100);
    t.equal(done.sha256, reference.sha256, 'byte-identical to an uninterrupted run');
    t.same(await s3.keys('crash/'), [done.object_key]);
  });

  await t.test('schedules add each window once; list and delete', async (t) => {
    const made = await post('/v1/export_schedules', {
      kind: 'invoices',
      format: 'csv',
      interval: 'daily',
      starts_at: '2026-10-01T10:00:00Z',
      destination: { type: 'local', path: 'daily' },
    });
    t.equal(made.status, 201, JSON.stringify(made.body));
    t.equal((await runExports(['--now', '2026-10-05T00:04:00Z'])).json.added, 2, 'Oct 2 and Oct 3');
    t.equal((await runExports(['--now', '2026-10-05T00:04:00Z'])).json.added, 0, 'never twice');
    t.equal((await runExports(['--now', '2026-10-05T00:05:00Z'])).json.added, 1, 'Oct 4 once settled');
    const list = await get(`/v1/exports?schedule_id=${made.body.id}`);
    t.same(list.body.data.map((e: { from: string }) => e.from).sort(), [
      '2026-10-02T00:00:00.000Z',
      '2026-10-03T00:00:00.000Z',
      '2026-10-04T00:00:00.000Z',
    ]);
    t.same((await readdir(path.join(root, 'daily/invoices'))).sort(), [
      'invoices_20261002T000000Z_20261003T000000Z.csv',
      'invoices_20261003T000000Z_20261004T000000Z.csv',
      'invoices_20261004T000000Z_20261005T000000Z.csv',
    ]);
    t.equal((await get('/v1/export_schedules')).body.data[0].id, made.body.id);
    t.equal((await callJson(w.api.url, admin, 'DELETE', `/v1/export_schedules/${made.body.id}`)).status, 204);
    t.equal((await get(`/v1/export_schedules/${made.body.id}`)).status, 404);
    t.equal((await runExports(['--now', '2026-10-09T00:00:00Z'])).json.added, 0, 'a deleted schedule adds none');
  });
});
