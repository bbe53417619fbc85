/**
 * `npm run test:unit`: runs every compiled test/unit file with plain `node`, two at a time. tap's own runner
 * spends ~3 s of CPU per file on its loaders before a test starts (0.4 s this way): with 25 files that was most
 * of the suite's time. Each file still reports TAP through `tap`; a failing file's whole report is printed, a
 * passing one as one line. `npm test` runs the same files under tap's runner with everything else.
 * The longest files start first (each file's last duration is kept in dist/.cache/; a fresh checkout starts with
 * the ones known to be long): a long file left for the end would run alone while the other slot idles.
 * Usage: node dist/test/unit/run.js [substring of file names …]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT, repoPath } from '../../shared/paths.js';

const TIMEOUT_MS = 300_000;
const dir = repoPath('dist/test/unit');
const filters = process.argv.slice(2);
const DURATIONS = repoPath('dist/.cache/unit-durations.json');
/** Before any run is recorded: the files that take longest on a fresh checkout (safe-regex analyses every regex). */
const KNOWN_LONG: Record<string, number> = {
  'safe-regex.test.js': 15_000,
  'rate-leases.test.js': 7_000,
  'password-cost.test.js': 2_500,
  'docs-generated.test.js': 1_500,
};

function lastDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS, 'utf8')) as Record<string, number>;
  } catch {
    return KNOWN_LONG;
  }
}

const durations = lastDurations();
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.js') && (!filters.length || filters.some((x) => f.includes(x))))
  .sort()
  .sort((a, b) => (durations[b] ?? 0) - (durations[a] ?? 0))
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
  for (const o of outcomes) durations[relative(dir, o.file)] = o.ms;
  mkdirSync(dirname(DURATIONS), { recursive: true });
  writeFileSync(DURATIONS, JSON.stringify(durations));
  return failed.length || !outcomes.length ? 1 : 0;
}

main().then((code) => process.exit(code));
