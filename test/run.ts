/**
 * `npm test`: bring up the local stack (installing servers when missing), run the whole tap suite
 * against it, then stop the servers this run launched. Test files get the server URLs through the
 * environment and create their own isolated databases, namespaces and accounts.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { stackUp, stackDown, stackStatus } from '../infra/stack/stack.js';
import { REPO_ROOT, repoPath } from '../shared/paths.js';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connectNats } from '../shared/clients/nats.js';
import { FailureDigest } from './failure-digest.js';
import { prepareTestTools } from './fixtures/tools.js';

async function findTests(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await findTests(p)));
    else if (entry.name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

/**
 * The multi-host test (three network-namespace hosts, HAProxy, a host loss and a rolling upgrade of 12 processes)
 * takes 5 minutes on an idle 2-core machine and several times that on a busy one: opt-in, and CI opts in.
 */
const OPT_IN: Record<string, string> = { 'e2e/hosts.test.js': 'METERLINE_HOSTS_TEST' };

/**
 * Run after the rest, by themselves: the multi-host test's nine servers and twelve role processes load the
 * machine (load average about 20 on 2 cores). Beside it, tests that stop NATS or kill consumers missed their
 * deadlines, and it missed its own: a returning NATS node not current within 180 s (a run of this stop).
 * tap sorts the files it is given, so a separate run is the only way to keep it apart.
 */
const ALONE = ['e2e/hosts.test.js'];

/** One tap run over `files`, `jobs` at a time; its report teed to stdout and its failures into `digest`. */
async function runTap(
  files: string[],
  jobs: number,
  env: NodeJS.ProcessEnv,
  digest: FailureDigest,
): Promise<{ code: number; totals: { pass: number; fail: number } | undefined }> {
  let totals: { pass: number; fail: number } | undefined;
  const code = await new Promise<number>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        repoPath('node_modules/tap/dist/esm/run.mjs'),
        '--disable-coverage',
        '--timeout=300',
        `--jobs=${jobs}`,
        `--reporter=${process.stdout.isTTY ? 'base' : 'tap'}`,
        ...files.map((f) => relative(REPO_ROOT, f)),
      ],
      { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    // Tee tap's report and keep its totals for the closing line CI reads.
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      const text = chunk.toString();
      digest.push(text);
      const base = /Asserts:\s+(\d+) pass\s+(\d+) fail/.exec(text);
      if (base) totals = { pass: Number(base[1]), fail: Number(base[2]) };
      const tap = /^# \{ total: (\d+), pass: (\d+)(.*)\}/m.exec(text);
      if (tap) {
        // Skipped and todo tests (a TAP_GREP run skips the rest) are neither passed nor failed.
        const other = [...tap[3]!.matchAll(/(skip|todo): (\d+)/g)].reduce((n, m) => n + Number(m[2]), 0);
        totals = { pass: Number(tap[2]), fail: Number(tap[1]) - Number(tap[2]) - other };
      }
    });
    child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
  });
  return { code, totals };
}

async function main(): Promise<number> {
  const started = Date.now();
  const log = (m: string) => process.stderr.write(`[test] ${m}\n`);
  const filter = process.argv.slice(2);
  const before = await stackStatus({ root: REPO_ROOT, env: process.env });
  const runningBefore = new Set(before.servers.filter((s) => s.running).map((s) => s.name));
  const stack = await stackUp({ root: REPO_ROOT, env: process.env, log });
  const launched = stack.servers.filter((s) => !s.external && !runningBefore.has(s.name));
  log(
    `stack ready in ${Date.now() - started} ms (${stack.servers.map((s) => `${s.name}${s.external ? ' external' : ''}`).join(', ')})`,
  );
  await prepareTestTools(log);

  let files = await findTests(repoPath('dist/test'));
  if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
  // Tests that need more than a few minutes run when their variable is set (.ci/run sets them) or when named.
  for (const [file, variable] of Object.entries(OPT_IN)) {
    if (process.env[variable] || filter.some((x) => file.includes(x))) continue;
    if (files.some((f) => f.endsWith(file))) log(`${file} not run: set ${variable}=1 (.ci/run does)`);
    files = files.filter((f) => !f.endsWith(file));
  }
  const env = {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    NATS_URL: stack.natsUrl,
    CLICKHOUSE_URL: stack.clickhouseUrl,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    SECRET_KEY: process.env.SECRET_KEY || randomBytes(32).toString('hex'),
    // Production hashes passwords at scrypt N = 2^17 (test/unit/password-cost.test.ts checks that default);
    // the suite creates hundreds of accounts, so its own processes use 2^12.
    PASSWORD_SCRYPT_LOG2_N: process.env.PASSWORD_SCRYPT_LOG2_N ?? '12',
    // Per-account default limits (20,000 records/s, 200 requests/s) would throttle the suite's own load tests;
    // the limits tests set explicit per-account limits and check enforcement against those.
    LIMIT_INGEST_RECORDS_PER_SECOND: process.env.LIMIT_INGEST_RECORDS_PER_SECOND ?? '10000000',
    LIMIT_REQUESTS_PER_SECOND: process.env.LIMIT_REQUESTS_PER_SECOND ?? '1000000',
    LIMIT_ATTRIBUTED_RECORDS_PER_SECOND: process.env.LIMIT_ATTRIBUTED_RECORDS_PER_SECOND ?? '10000000',
  };
  // The tests that need the whole machine run after the others, one at a time.
  const alone = files.filter((f) => ALONE.some((a) => f.endsWith(a)));
  const together = files.filter((f) => !alone.includes(f));
  const digest = new FailureDigest();
  const totals = { pass: 0, fail: 0 };
  let code = 0;
  for (const [batch, jobs] of [
    [together, 2],
    [alone, 1],
  ] as const) {
    if (batch.length === 0) continue;
    const run = await runTap(batch, jobs, env, digest);
    totals.pass += run.totals?.pass ?? 0;
    totals.fail += run.totals?.fail ?? 0;
    if (run.code !== 0 || !run.totals) code = run.code || 1;
  }
  process.stdout.write(digest.report());
  process.stdout.write(`\n${totals.pass} passed, ${totals.fail} failed\n`);
  await reportLeftStreams(stack.natsUrl, log).catch((err) => log(`could not list NATS streams: ${err}`));
  if (launched.length && !process.env.KEEP_STACK) {
    const down = await stackDown({ root: REPO_ROOT });
    log(`stopped ${down.stopped.map((s) => s.name).join(', ')}`);
  }
  log(`finished in ${((Date.now() - started) / 1000).toFixed(1)} s with exit code ${code}`);
  return code;
}

/**
 * Test worlds whose teardown did not run (a file killed at its timeout) leave streams behind, and each usage
 * stream keeps its max_bytes reserved against the server's max_file_store until nothing new fits. Says so.
 */
async function reportLeftStreams(natsUrl: string, log: (m: string) => void): Promise<void> {
  const nc = await connectNats(natsUrl, 'test-run-report');
  try {
    const jsm = await jetstreamManager(nc);
    let count = 0;
    let reserved = 0;
    for await (const s of jsm.streams.list()) {
      count++;
      if (s.config.max_bytes > 0 && s.config.storage === StorageType.File) reserved += s.config.max_bytes;
    }
    if (count > 0) log(`${count} NATS streams left after the run, ${(reserved / 1024 ** 3).toFixed(2)} GiB reserved`);
  } finally {
    await nc.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`[test] ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
