/**
 * The two load generators, run the same way for every target: autocannon (Node, with worker threads)
 * and wrk (C, from Debian). Both keep `connections` requests in flight (closed loop) for `seconds`.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  body: string;
  /** Several bodies, sent in turn by every connection (10,000 customers' records need more than one body). */
  bodies?: string[];
  /** GET only: several paths (with their queries), requested in turn by every connection (wrk). */
  paths?: string[];
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /** Worker threads of autocannon / threads of wrk. */
  threads: number;
  /** Per-request timeout (default: autocannon 10 s, wrk 2 s); slow routes need a longer one to be measured at all. */
  timeoutSeconds?: number;
  /**
   * wrk only: each thread stops after this many 2xx answers (a fixed volume rather than a fixed time; `seconds`
   * is then only an upper bound). The run ends when every thread has stopped.
   */
  acceptedPerThread?: number;
}

export interface LoadResult {
  tool: 'autocannon' | 'wrk' | 'ws';
  requests: number;
  requests_per_s: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  latency_max_ms: number;
  non_2xx: number;
  errors: number;
  duration_s: number;
  /** Process id of the generator, for CPU accounting (autocannon runs inside the benchmark process). */
  pid?: number;
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  '2xx': number;
}

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: object) => Promise<AutocannonResult>;

export async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const r = await autocannon({
    url: spec.url,
    method: spec.method ?? 'POST',
    ...(spec.method === 'GET' ? {} : { body: spec.body }),
    ...(spec.bodies ? { requests: spec.bodies.map((body) => ({ method: spec.method ?? 'POST', body })) } : {}),
    headers: spec.headers,
    connections: spec.connections,
    duration: spec.seconds,
    workers: spec.threads,
    pipelining: 1,
    ...(spec.timeoutSeconds ? { timeout: spec.timeoutSeconds } : {}),
  });
  const total = r['2xx'] + r.non2xx;
  return {
    tool: 'autocannon',
    requests: total,
    requests_per_s: total / r.duration,
    // No response at all → no latency (autocannon reports 0).
    latency_p50_ms: total ? r.latency.p50 : NaN,
    latency_p99_ms: total ? r.latency.p99 : NaN,
    latency_max_ms: total ? r.latency.max : NaN,
    non_2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    duration_s: r.duration,
    pid: process.pid,
  };
}

/** A Lua string literal: JSON string escapes are valid Lua for ASCII text. */
function luaString(s: string): string {
  if (!/^[\x20-\x7e]*$/.test(s)) throw new Error('wrk script strings must be printable ASCII');
  return JSON.stringify(s);
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
const toMs = (v: string, unit: string) => Number(v) * UNIT_MS[unit]!;

export function parseWrk(out: string, seconds: number): Omit<LoadResult, 'tool'> {
  // Line by line with anchored patterns: the regex lint (test/unit/safe-regex.test.ts) wants every regex linear.
  const lines = out.split('\n');
  const find = (re: RegExp) => {
    for (const line of lines) {
      const m = re.exec(line);
      if (m) return m;
    }
    return null;
  };
  const num = (re: RegExp) => {
    const m = find(re);
    return m ? Number(m[1]) : 0;
  };
  const lat = (pct: string) => {
    const m = find(new RegExp(`^\\s+${pct}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`));
    return m ? toMs(m[1]!, m[2]!) : NaN;
  };
  const max = find(/^\s*Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m)/);
  const summary = find(/^\s*(\d+) requests in ([\d.]+)(s|m)/);
  const socket = find(/^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  return {
    requests: summary ? Number(summary[1]) : 0,
    requests_per_s: num(/^Requests\/sec:\s+([\d.]+)/),
    latency_p50_ms: lat('50'),
    latency_p99_ms: lat('99'),
    latency_max_ms: max ? toMs(max[1]!, max[2]!) : NaN,
    non_2xx: num(/^\s*Non-2xx or 3xx responses: (\d+)/),
    errors: socket ? socket.slice(1).reduce((s, x) => s + Number(x), 0) : 0,
    duration_s: summary ? Number(summary[2]) * (summary[3] === 'm' ? 60 : 1) : seconds,
  };
}

export async function runWrk(spec: LoadSpec, onStart?: (pid: number) => void): Promise<LoadResult> {
  const script = join(tmpdir(), `meterline-wrk-${process.pid}-${Date.now()}.lua`);
  const lua = [
    `wrk.method = ${luaString(spec.method ?? 'POST')}`,
    ...(spec.method === 'GET' ? [] : [`wrk.body = ${luaString(spec.body)}`]),
    ...(spec.bodies
      ? [
          `local bodies = {${spec.bodies.map(luaString).join(',')}}`,
          'local next = 0',
          'request = function() next = next % #bodies + 1; return wrk.format(nil, nil, nil, bodies[next]) end',
        ]
      : []),
    ...(spec.paths
      ? [
          `local paths = {${spec.paths.map(luaString).join(',')}}`,
          'local next = 0',
          'request = function() next = next % #paths + 1; return wrk.format(nil, paths[next]) end',
        ]
      : []),
    ...Object.entries(spec.headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
    // A thread says it is done on stderr (unbuffered) and stops; wrk itself waits out -d, so it is interrupted below.
    ...(spec.acceptedPerThread
      ? [
          'local accepted = 0',
          `response = function(status) if status >= 200 and status < 300 then accepted = accepted + 1 end; if accepted == ${spec.acceptedPerThread} then io.stderr:write("thread-done\\n"); wrk.thread:stop() end end`,
        ]
      : []),
    '',
  ].join('\n');
  await writeFile(script, lua);
  try {
    const child = spawn(
      'wrk',
      [
        `-t${spec.threads}`,
        `-c${spec.connections}`,
        `-d${spec.seconds}s`,
        '--latency',
        ...(spec.timeoutSeconds ? ['--timeout', `${spec.timeoutSeconds}s`] : []),
        '-s',
        script,
        spec.url,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (child.pid) onStart?.(child.pid);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    let threadsDone = 0;
    child.stderr.on('data', (d) => {
      err += d;
      // SIGINT ends wrk's wait for -d: it then joins its threads and prints its summary as usual.
      threadsDone = err.split('thread-done').length - 1;
      if (spec.acceptedPerThread && threadsDone >= spec.threads) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', resolve);
    });
    if (code !== 0) throw new Error(`wrk exited with ${code}: ${err || out}`);
    if (spec.acceptedPerThread && threadsDone < spec.threads)
      throw new Error(`wrk stopped after ${spec.seconds} s with ${threadsDone} of ${spec.threads} threads done`);
    return { tool: 'wrk', ...parseWrk(out, spec.seconds), pid: child.pid };
  } finally {
    await rm(script, { force: true });
  }
}

export async function hasWrk(): Promise<boolean> {
  return new Promise((resolve) => {
    const c = spawn('wrk', ['--version'], { stdio: 'ignore' });
    c.on('error', () => resolve(false));
    c.on('exit', () => resolve(true));
  });
}
