/**
 * The processes a bench run launches (bench/run.ts): started with their output kept in bench/results/<run>.log,
 * ready on their IPC 'ready', and their counters read through IPC.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { setPriority } from 'node:os';
import { repoPath } from '../shared/paths.js';

export interface Proc {
  name: string;
  child: ChildProcess;
}

const procs: Proc[] = [];
const resultsDir = repoPath('bench/results');
const runId = new Date().toISOString().replace(/[:.]/g, '-');
/** This run's processes, where its results go and under which id. */
export const BENCH_PROCESSES = { procs, resultsDir, runId };
mkdirSync(resultsDir, { recursive: true });
/** Everything the launched processes print, for looking into a surprising number afterwards. */
const processLog: WriteStream = createWriteStream(`${resultsDir}/${runId}.log`);

/** Starts a process and resolves on its IPC 'ready' (or on a log line for the consumer role). */
export function launch(name: string, args: string[], env: Record<string, string>, readyLine?: string): Promise<Proc> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const p = { name, child };
  procs.push(p);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready within 60 s`)), 60_000);
    let stderr = '';
    child.stdout!.on('data', (d) => processLog.write(`[${name}] ${d}`));
    child.stderr!.on('data', (d) => {
      processLog.write(`[${name}] ${d}`);
      stderr += d;
      if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
    });
    child.stdout!.on('data', (d) => {
      if (readyLine && String(d).includes(readyLine)) {
        clearTimeout(timer);
        resolve(p);
      }
    });
    child.on('message', (m: { type?: string }) => {
      if (m?.type === 'ready') {
        clearTimeout(timer);
        resolve(p);
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${stderr.slice(-3000)}`));
    });
  });
}

let metricsId = 0;
/** A counter summed over this api process's registry, read through IPC. */
function apiCounter(p: Proc, metric: string, labels: Record<string, string> = {}): Promise<number> {
  const id = ++metricsId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${p.name}: no metrics answer`)), 10_000);
    const onMessage = (m: {
      type: string;
      id: number;
      metrics: { name: string; values: { value: number; labels: Record<string, string> }[] }[];
    }) => {
      if (m.type !== 'metrics' || m.id !== id) return;
      clearTimeout(timer);
      p.child.off('message', onMessage);
      const found = m.metrics.find((x) => x.name === metric);
      const match = (v: { labels: Record<string, string> }) =>
        Object.entries(labels).every(([k, x]) => v.labels[k] === x);
      resolve(found ? found.values.filter(match).reduce((s, v) => s + v.value, 0) : 0);
    };
    p.child.on('message', onMessage);
    p.child.send({ type: 'metrics', id });
  });
}

export async function acceptedRecords(apis: Proc[]): Promise<number> {
  const counts = await Promise.all(apis.map((p) => apiCounter(p, 'meterline_usage_records_accepted_total')));
  return counts.reduce((a, b) => a + b, 0);
}

/** JetStream messages the api processes published and had acknowledged (group commits). */
export async function storedMessages(apis: Proc[]): Promise<number> {
  const counts = await Promise.all(
    apis.map((p) => apiCounter(p, 'meterline_usage_messages_total', { outcome: 'stored' })),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * The processes a run measures: `apiProcs` ceiling servers (bench/ceiling-server.ts, on `ceilingPort`) and api
 * processes, `consumerProcs` usage consumers; with `profile`, V8 CPU profiles of the api and consumer processes.
 */
export async function launchRoles(
  env: Record<string, string>,
  ceilingPort: number,
  o: { apiProcs: number; consumerProcs: number; profile: boolean; apiNice?: number },
): Promise<{ ceilings: Proc[]; apis: Proc[]; consumers: Proc[] }> {
  const prof = o.profile ? ['--cpu-prof', `--cpu-prof-dir=${resultsDir}`] : [];
  const times = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));
  const ceilings = await times(o.apiProcs, (i) =>
    launch(`ceiling-${i}`, [repoPath('dist/bench/ceiling-server.js'), String(ceilingPort)], {}),
  );
  const apis = await times(o.apiProcs, (i) =>
    launch(`api-${i}`, [...prof, repoPath('dist/bench/api-process.js')], env),
  );
  if (o.apiNice) for (const a of apis) setPriority(a.child.pid!, o.apiNice);
  const consumers = await times(o.consumerProcs, (i) =>
    launch(
      `consumer-${i}`,
      [...prof, repoPath('dist/services/main.js'), 'consumer'],
      { ...env, LOG_LEVEL: 'info' },
      'usage consumer started',
    ),
  );
  return { ceilings, apis, consumers };
}
