/**
 * Cluster start soak (issue 50): `meterline up` of the local cluster (METERLINE_TOPOLOGY=cluster) from an empty
 * data directory, again and again — first one cluster at a time, then two at once on different port blocks — and
 * how long each took to be ready (its JSON on stdout: servers up, migrated, roles running). A start that is not
 * ready within --limit seconds counts as a hang (its ClickHouse error logs are printed) and the soak goes on.
 * Bounded: --starts single starts, then --pairs paired starts, each stopped and its directory removed.
 *
 *   node dist/bench/cluster-start-soak.js [--starts 20] [--pairs 5] [--bases 26400,26600] [--limit 240] [--ready 90]
 *
 * Exit 1 when a start hung or failed, or took longer than --ready seconds.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { stackDown } from '../infra/stack/stack.js';
import { repoPath } from '../shared/paths.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i !== -1 ? process.argv[i + 1]! : fallback;
};
const starts = Number(arg('starts', '20'));
const pairs = Number(arg('pairs', '5'));
const bases = arg('bases', '26400,26600').split(',').map(Number);
const limitMs = Number(arg('limit', '240')) * 1000;
const readyMs = Number(arg('ready', '90')) * 1000;
/** The cluster's servers take 23 consecutive ports (infra/stack/topology.ts); the api listens on the next. */
const API_PORT_OFFSET = 23;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

interface Outcome {
  ok: boolean;
  ms: number;
  detail: string;
}

/** The last error lines of each ClickHouse replica: why a start did not finish. */
function clickhouseErrors(root: string): string {
  const dir = path.join(root, '.data', 'cluster');
  if (!existsSync(dir)) return '';
  return readdirSync(dir)
    .filter((n) => n.startsWith('clickhouse'))
    .map((n) => {
      const file = path.join(dir, n, 'clickhouse-server.err.log');
      const errors = existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => l.includes('<Error>'))
        : [];
      return `  ${n}: ${errors.length} errors${errors.length ? `; last: ${errors.at(-1)!.slice(0, 300)}` : ''}`;
    })
    .join('\n');
}

/** One `meterline up` of the cluster on `base` from an empty root, timed until ready, then stopped. */
async function startOnce(base: number): Promise<Outcome> {
  const root = await mkdtemp(path.join(tmpdir(), 'meterline-soak-'));
  await chmod(root, 0o755); // Postgres runs as an unprivileged user and must reach its directory
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['DATABASE_URL', 'NATS_URL', 'CLICKHOUSE_URL', 'CLICKHOUSE_DATABASE', 'NATS_NAMESPACE'])
    delete env[k];
  Object.assign(env, {
    METERLINE_ROOT: root,
    METERLINE_TOPOLOGY: 'cluster',
    METERLINE_STACK_PORT_BASE: String(base),
    PORT: String(base + API_PORT_OFFSET),
    SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
  });
  const started = Date.now();
  const child = spawn(process.execPath, [repoPath('bin/meterline.js'), 'up'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let outcome: Outcome;
  for (;;) {
    const ms = Date.now() - started;
    try {
      JSON.parse(stdout);
      outcome = { ok: true, ms, detail: '' };
      break;
    } catch {
      // not ready yet
    }
    if (child.exitCode !== null) {
      outcome = { ok: false, ms, detail: `meterline up exited (${child.exitCode}): ${stderr.slice(-1500)}` };
      break;
    }
    if (ms > limitMs) {
      outcome = { ok: false, ms, detail: `HANG: not ready after ${limitMs / 1000} s\n${clickhouseErrors(root)}` };
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (child.exitCode === null) {
    child.kill('SIGTERM'); // stops the roles, then the servers it launched
    await exited;
  }
  await stackDown({ root, env }).catch(() => undefined);
  await rm(root, { recursive: true, force: true });
  return outcome;
}

const results: { label: string; o: Outcome }[] = [];
const report = (label: string, o: Outcome) => {
  results.push({ label, o });
  process.stdout.write(
    `${label}: ${o.ok ? 'ready' : 'FAILED'} in ${(o.ms / 1000).toFixed(1)} s (load ${load()})${o.detail ? `\n${o.detail}` : ''}\n`,
  );
};

process.stdout.write(`cluster start soak: ${starts} single, ${pairs} paired; load average at start ${load()}\n`);
for (let i = 1; i <= starts; i++) report(`single ${i}/${starts} (port base ${bases[0]})`, await startOnce(bases[0]!));
for (let i = 1; i <= pairs; i++) {
  const both = await Promise.all(bases.slice(0, 2).map((b) => startOnce(b)));
  both.forEach((o, j) => report(`pair ${i}/${pairs} cluster ${j + 1} (port base ${bases[j]})`, o));
}
const times = results.filter((r) => r.o.ok).map((r) => r.o.ms / 1000);
const failed = results.filter((r) => !r.o.ok).length;
const slow = results.filter((r) => r.o.ok && r.o.ms > readyMs).length;
const sorted = [...times].sort((a, b) => a - b);
process.stdout.write(
  `summary: ${results.length} starts, ${failed} failed or hung, ${slow} over ${readyMs / 1000} s; ready min ${sorted[0]?.toFixed(1)} s, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} s, max ${sorted.at(-1)?.toFixed(1)} s; load average at end ${load()}\n`,
);
process.exitCode = failed || slow ? 1 : 0;
