import t from 'tap';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aptGet } from '../../infra/stack/install.js';

/**
 * Two stacks installing a server at once (the suite's two cluster tests on a fresh machine, each needing
 * zookeeper) used to fail each other: apt-get refuses at once while another apt-get holds its lock. The fake
 * apt-get below behaves like that — it takes its own lock without waiting, exits 100 if it cannot, and works
 * for 300 ms — so concurrent calls only all succeed when aptGet runs them one at a time.
 */
t.test('concurrent apt-get runs wait for each other instead of failing', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'apt-lock-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const fake = join(dir, 'apt-get');
  const lock = join(dir, 'apt-lists.lock');
  const log = join(dir, 'calls.log');
  await writeFile(
    fake,
    `#!/bin/sh\nexec flock -n ${lock} sh -c 'echo "$*" >> ${log}; sleep 0.3' -- "$@" || exit 100\n`,
  );
  await chmod(fake, 0o755);
  const env = { ...process.env, PATH: `${dir}:${process.env.PATH}` };

  const codes = await Promise.all([
    aptGet(['update'], env),
    aptGet(['install', '-y', 'zookeeper'], env),
    aptGet(['install', '-y', 'chromium'], env),
  ]);
  t.same(codes, [0, 0, 0], 'every run got its turn: none was refused by another holding the lock');
  const calls = (await readFile(log, 'utf8')).trim().split('\n');
  t.equal(calls.length, 3, 'each run executed once');
  for (const c of calls) t.match(c, /^-o DPkg::Lock::Timeout=\d+ /, "apt-get also waits for dpkg's own lock");
});
