import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoPath } from '../../shared/paths.js';
import { isolatedConfig, waitUntil } from '../fixtures/env.js';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson } from '../fixtures/matrix.js';
import { startConsumer } from './ingest-helpers.js';

const run = promisify(execFile);
const TSC = repoPath('node_modules/typescript/bin/tsc');

/** What a project using the client writes: typed records through the emitter, a usage query, counters out. */
const SNIPPET = `import { MeterlineClient, UsageEmitter, type MeterUsage, type UsageRecord } from 'meterline/client';

const baseUrl = process.env.BASE!;
const token = process.env.TOKEN!;
const meterId = process.env.METER!;
const emitter = new UsageEmitter({ baseUrl, token, batchSize: 4, lingerMs: 10 });
for (let i = 1; i <= 10; i++) {
  const record: Omit<UsageRecord, 'id' | 'timestamp'> = { meter_id: meterId, value: i, dimensions: { region: 'eu' } };
  await emitter.emit(record);
}
await emitter.close();
const client = new MeterlineClient({ baseUrl, token });
const one = await client.recordMeterUsage(meterId, { value: 45, timestamp: new Date().toISOString(), id: 'snippet-1' });
const usage: MeterUsage = await client.getUsage(meterId, { window: 'none' });
console.log(JSON.stringify({ counters: emitter.counters, one: one.id, count: usage.count }));
`;

/** The same client misused: tsc must refuse it (the types are real, not any). */
const MISTAKE = `import { UsageEmitter } from 'meterline/client';
const emitter = new UsageEmitter({ baseUrl: 'http://127.0.0.1:1', token: 't' });
await emitter.emit({ meter_id: 'mtr_x', value: '3' });
`;

/** No onError: a bad token drops every batch, reported on stderr once per burst of drops. */
const DROPS = `import { UsageEmitter } from 'meterline/client';
const emitter = new UsageEmitter({ baseUrl: process.env.BASE!, token: 'not-a-token', batchSize: 2, lingerMs: 1, dropBurstGapMs: 300 });
const burst = async () => {
  for (let i = 0; i < 6; i++) await emitter.emit({ meter_id: process.env.METER!, value: 1 });
  await emitter.flush();
};
await burst();
await new Promise((r) => setTimeout(r, 600));
await burst();
await emitter.close();
console.log(JSON.stringify(emitter.counters));
`;

/** No onRejected: records refused for their content are reported on stderr once per burst, like drops. */
const REJECTS = `import { UsageEmitter } from 'meterline/client';
const emitter = new UsageEmitter({ baseUrl: process.env.BASE!, token: process.env.TOKEN!, batchSize: 3, lingerMs: 1 });
const unknown = 'mtr_0000000000000000000000';
for (let batch = 0; batch < 2; batch++) {
  await emitter.emit({ meter_id: process.env.METER!, value: 1 });
  await emitter.emit({ meter_id: unknown, value: 1 });
  await emitter.emit({ meter_id: process.env.METER!, value: 1 });
  await emitter.flush();
}
await emitter.close();
console.log(JSON.stringify(emitter.counters));
`;

/**
 * `meterline/client` as another project gets it (docs/client.md): `npm pack` of the built package
 * (dist/client-package, `npm run build`), installed into a scratch project without the network — the
 * tarball, and its one dependency `ws` packed from this checkout's node_modules (the version the lockfile
 * pinned) — a snippet type-checked by tsc against the installed `.d.ts`, then run against a real api.
 */
t.test('the packed client installs into another project, type-checks and sends records', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'meterline-client-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const pack = async (what: string) =>
    JSON.parse((await run('npm', ['pack', what, '--pack-destination', dir, '--json'], { cwd: dir })).stdout)[0];
  const packed = await pack(repoPath('dist/client-package'));
  t.match(packed, { name: 'meterline', filename: /^meterline-[\d.]+\.tgz$/ });
  const files = (packed.files as { path: string }[]).map((f) => f.path).sort();
  t.ok(files.includes('client/index.d.ts') && files.includes('client/index.js'), 'JS and type declarations');
  t.notOk(
    files.some((f) => !f.startsWith('client/') && f !== 'package.json'),
    'nothing of the server in it',
  );
  const ws = await pack(repoPath('node_modules/ws'));

  const project = join(dir, 'project');
  await run('mkdir', ['-p', project]);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', join(dir, ws.filename), join(dir, packed.filename)],
    { cwd: project },
  );
  t.same((await readdir(join(project, 'node_modules'))).filter((n) => !n.startsWith('.')).sort(), ['meterline', 'ws']);

  const tsconfig = (files: string[]) => ({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      // Node's own types (fetch, Response) from this checkout: the client needs no other.
      typeRoots: [repoPath('node_modules/@types')],
      types: ['node'],
      outDir: 'out',
    },
    files,
  });
  await writeFile(join(project, 'snippet.ts'), SNIPPET);
  await writeFile(join(project, 'drops.ts'), DROPS);
  await writeFile(join(project, 'rejects.ts'), REJECTS);
  await writeFile(join(project, 'mistake.ts'), MISTAKE);
  await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig(['snippet.ts', 'drops.ts', 'rejects.ts'])));
  await writeFile(join(project, 'tsconfig.mistake.json'), JSON.stringify(tsconfig(['mistake.ts'])));
  await t.resolves(run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project }), 'the snippets type-check');
  const refused = await run(process.execPath, [TSC, '-p', 'tsconfig.mistake.json'], { cwd: project }).then(
    () => undefined,
    (err: { stdout: string }) => err.stdout,
  );
  t.match(
    refused,
    /mistake\.ts.*TS2322: Type 'string' is not assignable to type 'number'/,
    'a string value is refused',
  );

  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  const { infra } = await startConsumer(t, config, { maxWaitMs: 50 });
  const account = await createTestAccount(infra);
  const meter = await callJson(api.url, account.tokens.write, 'POST', '/v1/meters', {
    name: 'requests',
    unit: 'requests',
    aggregation: 'sum',
  });
  const env = { ...process.env, BASE: api.url, TOKEN: account.tokens.write, METER: meter.body.id };

  await t.test('records sent by the installed client are stored and counted', async (t) => {
    const total = (10 * 11) / 2 + 45;
    const path = `/v1/meters/${meter.body.id}/usage?window=none`;
    // The meter reaches every ingress within milliseconds (NATS KV): until then the api answers 404.
    await waitUntil(
      async () => (await callJson(api.url, account.tokens.read, 'GET', path)).status === 200,
      'the meter to be readable',
    );
    const out = await run(process.execPath, ['out/snippet.js'], { cwd: project, env });
    const result = JSON.parse(out.stdout);
    t.match(result.counters, { emitted: 10, accepted: 10, rejected: 0, failed: 0, pending: 0 });
    t.equal(result.one, 'snippet-1');
    await waitUntil(
      async () => (await callJson(api.url, account.tokens.read, 'GET', path)).body?.value === total,
      `the usage query to count ${total}`,
      30_000,
      100,
    );
    t.equal(out.stderr, '', 'nothing on stderr');
  });

  await t.test('an emitter without onError reports drops on stderr once per burst', async (t) => {
    const out = await run(process.execPath, ['out/drops.js'], { cwd: project, env });
    t.match(JSON.parse(out.stdout), { emitted: 12, failed: 12, accepted: 0, pending: 0 });
    const lines = out.stderr.trim().split('\n');
    t.equal(lines.length, 2, 'two bursts (3 batches each), one line each');
    for (const line of lines)
      t.match(
        line,
        /^meterline\/client: dropped 2 usage records: meterline 401 unauthorized: The access token is malformed\. .* pass onError/,
      );
  });

  await t.test('an emitter without onRejected reports rejected records on stderr once per burst', async (t) => {
    const out = await run(process.execPath, ['out/rejects.js'], { cwd: project, env });
    t.match(JSON.parse(out.stdout), { emitted: 6, accepted: 4, rejected: 2, failed: 0, pending: 0 });
    const lines = out.stderr.trim().split('\n');
    t.equal(lines.length, 1, 'two rejections in one burst: one line');
    t.match(
      lines[0],
      /^meterline\/client: 1 usage record rejected \(not retried\), the first: not_found .* pass onRejected/,
    );
  });
});
