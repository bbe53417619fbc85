import t from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoPath } from '../../shared/paths.js';
import { checkMigration } from '../../shared/migration-rules.js';
import type { Config } from '../../shared/config.js';
import { isolatedConfig, roleProcessEnv, testInfra, waitUntil } from '../fixtures/env.js';
import { startRoleProcess } from '../fixtures/role-process.js';
import { makeRelease } from '../fixtures/release.js';
import { createTestAccount } from '../fixtures/auth.js';
import { callJson, usageRecord, waitForIngressMeter } from '../fixtures/matrix.js';

// docs/upgrades.md: a release migrates first, then rolls its processes; meanwhile the previous release's
// processes run against the new schema. So a migration may only expand the schema (shared/migration-rules.ts).
// Here: every migration written since the rule follows it; a new release's expanding migrations, applied by its
// own `meterline migrate` under the running processes of this build, leave those processes working; and a
// migration that breaks the rule is both caught by the check and really breaks them.

/** Files written before the rule (applied with every process stopped): the check starts after them. */
const RULE_SINCE = { postgres: '510_usage_corrections.sql', clickhouse: '350_usage_unique_meters_ready.sql' };

t.test('every migration since the rule only expands the schema', async (t) => {
  for (const kind of ['postgres', 'clickhouse'] as const) {
    const dir = repoPath('infra/migrations', kind);
    const files = readdirSync(dir).filter((f) => f.endsWith('.sql') && f > RULE_SINCE[kind]);
    for (const f of files)
      t.same(checkMigration(kind, f, readFileSync(path.join(dir, f), 'utf8')), [], `${kind}/${f} follows the rule`);
    t.pass(`${files.length} ${kind} migrations after ${RULE_SINCE[kind]}`);
  }
  // The check knows what breaks the previous release.
  const breaks = (sql: string, kind: 'postgres' | 'clickhouse' = 'postgres') =>
    checkMigration(kind, 'x.sql', sql).map((b) => b.why);
  t.match(breaks('ALTER TABLE meters RENAME COLUMN unit TO unit_name;'), [/renames/]);
  t.match(breaks('ALTER TABLE meters DROP COLUMN unit;'), [/drops a column/]);
  t.match(breaks('ALTER TABLE invoices ADD COLUMN note text NOT NULL;'), [/required column/]);
  t.match(breaks('ALTER TABLE invoices ALTER COLUMN amount TYPE numeric(20, 2);'), [/column type/]);
  t.match(breaks('ALTER TABLE invoices ALTER COLUMN note SET NOT NULL;'), [/required/]);
  t.match(breaks('ALTER TABLE {database}.usage_records MODIFY COLUMN value Decimal(38, 2);', 'clickhouse'), [
    /changes a column/,
  ]);
  t.same(breaks("ALTER TABLE invoices ADD COLUMN note text NOT NULL DEFAULT '';"), []);
  t.same(breaks('CREATE TABLE IF NOT EXISTS notes (id text PRIMARY KEY);\nCREATE INDEX notes_id ON notes (id);'), []);
  t.same(
    breaks(
      '-- contract: unit_name replaced unit in release 7; no release before 7 runs\nALTER TABLE meters DROP COLUMN unit;',
    ),
    [],
  );
});

/** The new release's `meterline migrate` against the test's world (as an operator runs it before the roll). */
function migrateWith(release: string, config: Config): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(release, 'bin/meterline.js'), 'migrate'], {
      env: { ...process.env, ...roleProcessEnv(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code: code ?? 1, out }));
  });
}

t.test('an expanding migration applied under the running processes of the release before', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const [api] = await Promise.all([startRoleProcess(t, 'api', config), startRoleProcess(t, 'consumer', config)]);
  const base = api.metricsUrl.replace(/\/metrics$/, '');
  const account = await createTestAccount(infra);
  const write = account.tokens.write;
  const meter = await callJson(base, write, 'POST', '/v1/meters', { name: 'calls', unit: 'call', aggregation: 'sum' });
  t.equal(meter.status, 201);
  const meterId = meter.body.id as string;
  await waitForIngressMeter(base, write, meterId);
  let sent = 0;
  const ingest = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await callJson(base, write, 'POST', `/v1/meters/${meterId}/usage`, usageRecord());
      t.equal(r.status, 202);
      sent++;
    }
  };
  await ingest(5);

  const expand = {
    'postgres/990_compat_expand.sql': [
      'ALTER TABLE meters ADD COLUMN compat_note text;',
      'ALTER TABLE invoices ADD COLUMN compat_flag boolean NOT NULL DEFAULT false;',
      'CREATE TABLE IF NOT EXISTS compat_audit (id bigserial PRIMARY KEY, meter_id text REFERENCES meters (id), at timestamptz NOT NULL DEFAULT now());',
      'CREATE INDEX IF NOT EXISTS meters_compat_note ON meters (compat_note);',
      '',
    ].join('\n'),
    'clickhouse/990_compat_expand.sql':
      "ALTER TABLE {database}.usage_records ADD COLUMN compat_source String DEFAULT '';\n",
  };
  for (const [file, sql] of Object.entries(expand))
    t.same(
      checkMigration(file.startsWith('postgres') ? 'postgres' : 'clickhouse', file, sql),
      [],
      `${file} follows the rule`,
    );
  const release = await makeRelease(t, { build: 'release-next', migrations: expand });
  // Ingest keeps going while the new release migrates.
  const during = ingest(20);
  const migrated = await migrateWith(release, config);
  await during;
  t.equal(migrated.code, 0, `the new release migrates: ${migrated.out.slice(-500)}`);
  t.match(migrated.out, /990_compat_expand/);
  t.equal(
    (
      await infra.pg.query(
        `SELECT 1 FROM information_schema.columns WHERE table_name = 'meters' AND column_name = 'compat_note'`,
      )
    ).rowCount,
    1,
  );

  // The processes of the release before still do everything: create and read, ingest and count exactly.
  await ingest(5);
  const another = await callJson(base, write, 'POST', '/v1/meters', { name: 'more', unit: 'call', aggregation: 'sum' });
  t.equal(another.status, 201, 'creates a meter');
  t.equal((await callJson(base, account.tokens.read, 'GET', `/v1/meters/${meterId}`)).status, 200, 'reads it');
  t.equal((await callJson(base, account.tokens.read, 'GET', '/v1/meters')).status, 200, 'lists meters');
  await waitUntil(
    async () =>
      (await callJson(base, account.tokens.read, 'GET', `/v1/meters/${meterId}/usage?window=none`)).body.count === sent,
    'every record counted by the consumer of the release before',
    60_000,
    200,
  );
  t.pass(`${sent} records ingested and counted across the migration`);

  // A migration that breaks the rule: caught by the check, and it does break the running release.
  const rename = { 'postgres/991_compat_rename.sql': 'ALTER TABLE meters RENAME COLUMN unit TO unit_name;\n' };
  t.match(checkMigration('postgres', '991', rename['postgres/991_compat_rename.sql']), [{ why: /renames/ }]);
  const breaking = await makeRelease(t, { build: 'release-broken', migrations: { ...expand, ...rename } });
  t.equal((await migrateWith(breaking, config)).code, 0);
  const broken = await callJson(base, write, 'POST', '/v1/meters', { name: 'late', unit: 'call', aggregation: 'sum' });
  t.equal(broken.status, 500, 'the release before can no longer create meters (it writes `unit`): why the rule exists');
});
