/**
 * What a server file provides (`ServerKind`) and the one generic way to start a server process:
 * check its ports, spawn it detached, record its pid, probe until it answers (never a fixed sleep),
 * and on failure say which server failed and show the end of its log.
 */
import { chown } from 'node:fs/promises';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { StackError, type ServerName } from './errors.js';
import type { ProbeResult } from './probe.js';
import { redactUrl } from './probe.js';
import {
  LOG_TAIL_LINES,
  assertPortFree,
  describeExit,
  errMessage,
  fileSize,
  isAlive,
  spawnDetached,
  stopPid,
  tailFile,
  waitFor,
  type ExitInfo,
  type RunAs,
} from './process.js';

/** Overall readiness timeout for a freshly launched server. */
export const READY_TIMEOUT_MS = 60_000;

export interface ServerHandle {
  name: ServerName;
  url: string;
  pid: number;
  dir: string;
  logFile: string;
  stop(): Promise<void>;
}

/** How to launch a server: the executable and the arguments that precede our own. */
export interface ServerCommand {
  command: string;
  args: string[];
}

/** Named ports of one instance (`{http, tcp, interserver}` for ClickHouse); every instance has its own. */
export type Ports = Record<string, number>;

/** Where and how one instance of a server runs. */
export interface InstanceOptions {
  dir: string;
  ports: Ports;
  host?: string;
  timeoutMs?: number;
  /** Server user → password: the instance refuses every other connection. Unset: open to anyone on the host. */
  passwords?: Record<string, string>;
  /** NATS_NAMESPACE whose streams, buckets and subjects the roles' NATS permissions name. */
  natsNamespace?: string;
  /** In a cluster topology (topology.ts): what this instance must know of the others. */
  cluster?: ClusterPlace;
  /**
   * NATS: open the HTTP monitoring endpoint on its port (METERLINE_NATS_MONITOR=1), loopback only. Off by
   * default: nats-server 2.9's monitor takes no credentials and lists connections, users and streams.
   */
  openMonitor?: boolean;
  /** Addresses besides loopback whose clients may connect (the other hosts of an inventory). */
  clients?: string[];
}

/** An instance's place in a cluster topology. */
export interface ClusterPlace {
  /** The cluster's name (NATS cluster, ClickHouse remote_servers). */
  name: string;
  /** Every instance of this kind, self included, in order (NATS routes, a ZooKeeper ensemble); `host` default: its own. */
  peers: { name: string; ports: Ports; host?: string }[];
  /** This instance's name (unique; ClickHouse's `replica` macro). */
  self: string;
  /** ClickHouse: 1-based shard number, every shard's replicas, the ZooKeeper nodes. */
  shard?: number;
  shards?: { host: string; ports: Ports }[][];
  zookeepers?: { host: string; port: number }[];
}

/** Who connects to the servers: the test harness and operator tools, migrations, and each role. */
export const PROFILES = ['admin', 'migrate', 'api', 'consumer', 'dispatcher', 'billing'] as const;
export type Profile = (typeof PROFILES)[number];

export interface Login {
  user: string;
  password: string;
}

/** Everything the stack knows about one kind of server; each lives in its own file (postgres.ts, nats.ts, …). */
export interface ServerKind {
  name: ServerName;
  /** Debian package that provides it: installed with apt-get when missing and we are root. */
  debianPackage: string;
  /** The binary looked for, named in the "not installed" message. */
  binaryDescription: string;
  /** The executable and its leading arguments, or null when it is not installed. */
  command(): ServerCommand | null;
  /** The signal that shuts it down cleanly and quickly. */
  stopSignal: NodeJS.Signals;
  /** The setting that points meterline at a server of this kind (and makes the stack leave it alone). */
  urlVariable: 'DATABASE_URL' | 'NATS_URL' | 'CLICKHOUSE_URL' | null;
  /** The local stack's ports, in the order they are taken from METERLINE_STACK_PORT_BASE. */
  defaultPorts: Ports;
  /** The server user each profile connects as; one password per distinct user. */
  userOf: Record<Profile, string>;
  /** Users the servers of this kind use among themselves (ClickHouse replication); each gets a password too. */
  serverUsers?: readonly string[];
  /** The log to point people at. */
  logFile(dir: string): string;
  /** The URL a client uses: with `login`, as that user (and, for Postgres, in that user's database). */
  url(ports: Ports, host?: string, login?: Login): string;
  start(o: InstanceOptions): Promise<ServerHandle>;
  /** Does the server at `url` answer (and is it the kind of server we need)? */
  probe(url: string): Promise<ProbeResult>;
}

export interface LaunchSpec {
  server: ServerName;
  command: ServerCommand;
  args: string[];
  dir: string;
  /** File that receives the child's stdout/stderr. */
  stdoutLog: string;
  /** The log to point people at (may differ from stdoutLog, e.g. ClickHouse). */
  logFile: string;
  /** Other logs whose tail helps diagnose a failed start. */
  extraLogs?: string[];
  url: string;
  probe(url: string): Promise<ProbeResult>;
  stopSignal: NodeJS.Signals;
  runAs?: RunAs | null;
  env?: NodeJS.ProcessEnv;
  ports: { port: number; role: string }[];
  host: string;
  timeoutMs?: number;
}

const ADDR_IN_USE = /address already in use|EADDRINUSE/i;

export function requireCommand(kind: Pick<ServerKind, 'name' | 'command'>): ServerCommand {
  const c = kind.command();
  if (!c) throw new StackError(`${kind.name} is not installed; call ensureInstalled('${kind.name}') first`, kind.name);
  return c;
}

/** Runs a start function so that every failure is a StackError naming the server. */
export async function named<T>(server: ServerName, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof StackError && e.server) throw e;
    throw new StackError(`${server}: ${errMessage(e)}`, server, e instanceof StackError ? e.logFile : undefined);
  }
}

async function assertPortsFree(l: LaunchSpec): Promise<void> {
  const ports = l.ports.map((p) => p.port);
  if (new Set(ports).size !== ports.length) {
    throw new StackError(
      `${l.server}: ports must be distinct (${l.ports.map((p) => `${p.role} ${p.port}`).join(', ')})`,
      l.server,
    );
  }
  for (const p of l.ports) await assertPortFree(p.port, l.host, l.server, p.role);
}

/** A StackError for a failed start, with the tail of each log written since the start began. */
function failureReporter(l: LaunchSpec): (what: string) => StackError {
  const logs = [...new Set([l.logFile, l.stdoutLog, ...(l.extraLogs ?? [])])];
  const offsets = new Map(logs.map((f) => [f, fileSize(f)] as const));
  return (what) => {
    const tails = logs.map((f) => [f, tailFile(f, LOG_TAIL_LINES, offsets.get(f))] as const).filter(([, t]) => t);
    const tail = tails.length
      ? tails.map(([f, t]) => (logs.length > 1 ? `--- ${f}\n${t}` : t)).join('\n')
      : '(log is empty)';
    const portHint = ADDR_IN_USE.test(tail)
      ? ` One of its ports (${l.ports.map((p) => `${p.role} ${p.port}`).join(', ')}) is already in use.`
      : '';
    return new StackError(
      `${l.server} ${what}.${portHint} See ${l.logFile}; last lines:\n${tail}`,
      l.server,
      l.logFile,
    );
  };
}

/** Start the server process described by `l` and resolve once its probe succeeds. */
export async function launch(l: LaunchSpec): Promise<ServerHandle> {
  await assertPortsFree(l);
  const failure = failureReporter(l);
  const child = spawnDetached(l.command.command, [...l.command.args, ...l.args], {
    cwd: l.dir,
    logFile: l.stdoutLog,
    runAs: l.runAs,
    env: l.env,
  });
  let exited: ExitInfo | Error | null = null;
  child.on('exit', (code, signal) => (exited = { code, signal }));
  child.on('error', (e) => (exited = e));
  child.unref();
  if (child.pid === undefined) {
    await new Promise((r) => setImmediate(r));
    throw new StackError(
      `${l.server}: could not start ${l.command.command}: ${exited ? describeExit(exited) : 'spawn failed'}`,
      l.server,
      l.logFile,
    );
  }
  const pid = child.pid;
  const pidFile = path.join(l.dir, 'pid');
  writeFileSync(pidFile, `${pid}\n`);
  if (l.runAs) await chown(pidFile, l.runAs.uid, l.runAs.gid).catch(() => undefined);
  const timeoutMs = l.timeoutMs ?? READY_TIMEOUT_MS;
  let lastDetail = '';
  const died = () => failure(`${exited ? describeExit(exited) : 'exited'} before becoming ready`);
  try {
    await waitFor(
      async () => {
        if (exited || !isAlive(pid)) throw died();
        const r = await l.probe(l.url);
        lastDetail = r.detail ?? '';
        if (r.ok && (exited || !isAlive(pid))) throw died();
        return r.ok;
      },
      { timeoutMs, intervalMs: 100, what: `${l.server} to answer at ${redactUrl(l.url)}` },
    );
  } catch (e) {
    forgetPid(pidFile, pid);
    if (e instanceof StackError && e.server) throw e;
    // Timed out: do not leave a half-started server behind.
    await stopPid(pid, 10_000, l.stopSignal).catch(() => undefined);
    throw failure(`did not become ready within ${timeoutMs / 1000} s (last probe: ${lastDetail || 'no answer'})`);
  }
  return {
    name: l.server,
    url: l.url,
    pid,
    dir: l.dir,
    logFile: l.logFile,
    stop: () => stopPid(pid, 30_000, l.stopSignal),
  };
}

function forgetPid(pidFile: string, pid: number): void {
  try {
    if (readFileSync(pidFile, 'utf8').trim() === String(pid)) rmSync(pidFile, { force: true });
  } catch {
    /* already gone */
  }
}

/** The login a profile uses on a secured instance; none on an open one. */
export function loginOf(
  kind: Pick<ServerKind, 'userOf'>,
  passwords: Record<string, string> | undefined,
  profile: Profile,
): Login | undefined {
  const user = kind.userOf[profile];
  const password = passwords?.[user];
  return password ? { user, password } : undefined;
}
