/**
 * `npm run test:unit`: runs every compiled test/unit file with plain `node`, two at a time. tap's own runner
 * spends ~3 s of CPU per file on its loaders before a test starts (0.4 s this way): with 25 files that was most
 * of the suite's time. Each file still reports TAP through `tap`; a failing file's whole report is printed, a
 * passing one as one line. `npm test` runs the same files under tap's runner with everything else.
 * Usage: node dist/test/unit/run.js [substring of file names …]
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT, repoPath } from '../../shared/paths.js';

const TIMEOUT_MS = 300_000;
const dir = repoPath('dist/test/unit');
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.js') && (!filters.length || filters.some((x) => f.includes(x))))
  .sort()
  .map((f) => join(dir, f));

interface Outcome {
  file: string;
  ok: boolean;
  ms: number;
  total: number;
  pass: number;
  output: string;
}

function run(file: string): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    const timer = setTimeout(() => {
      output += `\n# killed after ${TIMEOUT_MS / 1000} s\n`;
      child.kill('SIGKILL');
    }, TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const totals = /^# \{ total: (\d+), pass: (\d+)/m.exec(output);
      const [total, pass] = totals ? [Number(totals[1]), Number(totals[2])] : [0, 0];
      resolve({ file, ok: code === 0 && !!totals && total === pass, ms: Date.now() - started, total, pass, output });
    });
  });
}

async function main(): Promise<number> {
  const started = Date.now();
  const queue = [...files];
  const outcomes: Outcome[] = [];
  const worker = async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const o = await run(file);
      outcomes.push(o);
      const name = relative(REPO_ROOT, o.file);
      if (!o.ok) process.stdout.write(`${o.output}\n`);
      process.stdout.write(
        `${o.ok ? 'ok' : 'not ok'} ${outcomes.length} - ${name} # ${o.pass}/${o.total} in ${o.ms} ms\n`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(2, availableParallelism()) }, worker));
  const failed = outcomes.filter((o) => !o.ok);
  const asserts = outcomes.reduce((s, o) => ({ total: s.total + o.total, pass: s.pass + o.pass }), {
    total: 0,
    pass: 0,
  });
  process.stdout.write(
    `1..${outcomes.length}\n# ${outcomes.length - failed.length} of ${outcomes.length} files passed; asserts ${asserts.pass}/${asserts.total}; ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  for (const o of failed) process.stdout.write(`# failed: ${relative(REPO_ROOT, o.file)}\n`);
  return failed.length || !outcomes.length ? 1 : 0;
}

main().then((code) => process.exit(code));
