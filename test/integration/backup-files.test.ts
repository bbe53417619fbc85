import t from 'tap';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApi } from '../fixtures/api.js';
import { createTestAccount } from '../fixtures/auth.js';
import { isolatedConfig, roleProcessEnv } from '../fixtures/env.js';
import { meterline } from '../e2e/backup-helpers.js';

/**
 * Issue 49 item 5 (docs/backups.md): a backup holds every account's data and the deployment's secret key, so
 * every file `meterline backup create` writes is mode 0600 and every directory 0700 — the Postgres dump included
 * (pg_dump makes its file 0644 under the usual umask; before the fix it stayed so). Checked under the usual umask.
 */
t.test('every file of a backup is 0600, every directory 0700', async (t) => {
  const config = await isolatedConfig(t);
  const api = await startApi(t, config);
  await createTestAccount(api.infra, { name: 'Backed up' });
  const parent = await mkdtemp(path.join(tmpdir(), 'meterline-backup-modes-'));
  t.teardown(() => rm(parent, { recursive: true, force: true }));
  const dir = path.join(parent, 'backup');
  const old = process.umask(0o022);
  t.teardown(() => void process.umask(old));
  const made = await meterline(['backup', 'create', '--out', dir], {
    ...process.env,
    ...roleProcessEnv(config),
    LOG_LEVEL: 'warn',
  });
  t.equal(made.code, 0, made.stderr.slice(-1500));
  const modes: Record<string, string> = {};
  const dirs = new Set(['.']);
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      modes[path.relative(dir, p)] = ((await stat(p)).mode & 0o777).toString(8);
      if (e.isDirectory()) {
        dirs.add(path.relative(dir, p));
        await walk(p);
      }
    }
  };
  modes['.'] = ((await stat(dir)).mode & 0o777).toString(8);
  await walk(dir);
  t.ok(Object.keys(modes).length > 5, `${Object.keys(modes).length} entries: ${Object.keys(modes).join(', ')}`);
  t.equal(modes['postgres.dump'], '600', 'the Postgres dump');
  t.equal(modes['secret.key'], '600');
  const wrong = Object.entries(modes).filter(([p, m]) => m !== (dirs.has(p) ? '700' : '600'));
  t.same(wrong, [], 'files 0600, directories 0700');
});
