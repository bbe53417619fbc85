/**
 * The local stack used by `npm start` and `npm test`: the instances of `topology.ts` (one PostgreSQL,
 * one nats-server with JetStream, one ClickHouse), data under `<root>/.data/`, on loopback.
 * Idempotent: `stackUp` reuses servers that are already running (recorded in `.data/stack.json`, and
 * still the process started in their directory); `stackDown` stops exactly the pids it recorded.
 *
 * Setting DATABASE_URL / NATS_URL / CLICKHOUSE_URL makes that server "external": it is only probed,
 * never installed, started or stopped.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { SERVER_NAMES, StackError, type ServerName } from './errors.js';
import { ensureInstalled } from './install.js';
import { ensureFonts } from './fonts.js';
import { PROFILES, loginOf, type Ports, type Profile, type ServerKind } from './launch.js';
import { ensureCredentials, readCredentials, serverUsersOf, type Credentials } from './credentials.js';
import { redactUrl } from './probe.js';
import { isAlive, ownsPid, stopPid } from './process.js';
import { candidates, newRecord, reuse } from './running-instance.js';
import { SERVERS } from './servers.js';
import {
  readRoleProcesses,
  readState,
  stackDataDir,
  topologyName,
  withLock,
  writeState,
  type ProcessEntry,
  type ServerRecord,
} from './state.js';
import { waitForJetstreamLeader } from './nats.js';
import { CLUSTER_SETTINGS, topology, type Instance } from './topology.js';

export { stackDataDir } from './state.js';

export interface StackServer {
  name: string;
  kind: ServerName;
  /** Without credentials (they are in `.data/credentials.json`). */
  url: string;
  pid: number | null;
  external: boolean;
  running: boolean;
  logFile: string | null;
  ports: Ports | null;
  /** Whether the server requires passwords (false: started open by an older launcher, or external). */
  secured: boolean;
}

export interface ServerUrls {
  DATABASE_URL: string;
  NATS_URL: string;
  CLICKHOUSE_URL: string;
}

export interface StackInfo {
  /** The admin profile's URLs: full rights (tests' isolated worlds, the bench, operator tools). */
  databaseUrl: string;
  natsUrl: string;
  clickhouseUrl: string;
  /** The URLs each profile connects with, credentials included: never print them. */
  profiles: Record<Profile, ServerUrls>;
  /** Settings the roles need besides the URLs (the cluster's NATS_STREAM_REPLICAS and CLICKHOUSE_CLUSTER). */
  settings: Record<string, string>;
  servers: StackServer[];
}

/** A server as `stackUp`/`stackStatus` found it, with the URL each profile uses. */
interface Entry {
  server: StackServer;
  urls: Record<Profile, string>;
}

type Log = (m: string) => void;

function externalUrl(env: NodeJS.ProcessEnv, kind: ServerKind): string | null {
  if (!kind.urlVariable) return null;
  const v = env[kind.urlVariable];
  return v && v.trim() !== '' ? v.trim() : null;
}

function toError(name: string, kind: ServerName, e: unknown): StackError {
  if (e instanceof StackError && e.server) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new StackError(`${name}: ${message}`, kind, e instanceof StackError ? e.logFile : undefined);
}

function throwAll(failures: StackError[], what: string): void {
  if (failures.length === 1) throw failures[0];
  if (failures.length === 0) return;
  const err = new StackError(`${failures.length} ${what}:\n` + failures.map((f) => `- ${f.message}`).join('\n'));
  err.failures = failures;
  throw err;
}

const URL_SETTING: Record<(typeof SERVER_NAMES)[number], keyof ServerUrls> = {
  postgres: 'DATABASE_URL',
  nats: 'NATS_URL',
  clickhouse: 'CLICKHOUSE_URL',
};

/** Each setting gets every instance of its kind, comma-separated (one in the single topology). */
function info(entries: Entry[], settings: Record<string, string> = {}): StackInfo {
  const sorted = sortServers(entries.map((e) => ({ ...e, name: e.server.name })));
  const urlsOf = (p: Profile) =>
    Object.fromEntries(
      SERVER_NAMES.map((k) => [
        URL_SETTING[k],
        sorted
          .filter((e) => e.server.kind === k)
          .map((e) => e.urls[p])
          .join(','),
      ]),
    ) as unknown as ServerUrls;
  const profiles = Object.fromEntries(PROFILES.map((p) => [p, urlsOf(p)])) as Record<Profile, ServerUrls>;
  const { DATABASE_URL, NATS_URL, CLICKHOUSE_URL } = profiles.admin;
  return {
    databaseUrl: DATABASE_URL,
    natsUrl: NATS_URL,
    clickhouseUrl: CLICKHOUSE_URL,
    profiles,
    settings,
    servers: sorted.map((e) => e.server),
  };
}

function sameForAll(url: string): Record<Profile, string> {
  return Object.fromEntries(PROFILES.map((p) => [p, url])) as Record<Profile, string>;
}

function external(kind: ServerKind, url: string, running: boolean): Entry {
  const server = {
    name: kind.name,
    kind: kind.name,
    url: redactUrl(url),
    pid: null,
    external: true,
    running,
    logFile: null,
    ports: null,
    secured: false,
  };
  return { server, urls: sameForAll(url) };
}

/** The URL of each profile: with its login on a secured instance, the recorded URL on an open one. */
function profileUrls(i: Instance, rec: ServerRecord | undefined, creds: Credentials): Record<Profile, string> {
  const passwords = creds[i.kind.name];
  if (!rec?.secured || !passwords) return sameForAll(rec?.url ?? i.url);
  const ports = rec.ports ?? i.ports;
  return Object.fromEntries(
    PROFILES.map((p) => [p, i.kind.url(ports, i.host, loginOf(i.kind, passwords, p))]),
  ) as Record<Profile, string>;
}

function local(
  i: Instance,
  pid: number | null,
  running: boolean,
  rec: ServerRecord | undefined,
  creds: Credentials,
): Entry {
  const server = {
    name: i.name,
    kind: i.kind.name,
    url: rec?.url ?? i.url,
    pid,
    external: false,
    running,
    logFile: rec?.logFile ?? i.kind.logFile(i.dir),
    ports: rec?.ports ?? i.ports,
    secured: rec?.secured === true,
  };
  return { server, urls: profileUrls(i, rec, creds) };
}

async function upInstance(
  i: Instance,
  rec: ServerRecord | undefined,
  o: UpOptions,
): Promise<{ entry: Entry; record: ServerRecord }> {
  for (const c of candidates(i, rec, o.creds)) {
    if (await reuse(i, c, profileUrls(i, c, o.creds).admin, o.log)) {
      o.log(
        `${i.name}: reusing pid ${c.pid} at ${c.url}${c.secured ? '' : ' (started without passwords: restart it to lock it down)'}`,
      );
      return { entry: local(i, c.pid, true, c, o.creds), record: c };
    }
  }
  await ensureInstalled(i.kind);
  o.log(`${i.name}: starting in ${i.dir}`);
  const t0 = Date.now();
  const h = await i.kind.start({
    dir: i.dir,
    ports: i.ports,
    passwords: o.creds[i.kind.name],
    natsNamespace: o.natsNamespace,
    cluster: i.cluster,
    openMonitor: o.natsMonitor,
    host: i.host,
    clients: i.clients,
  });
  o.log(`${i.name}: ready at ${i.url} (pid ${h.pid}, ${Date.now() - t0} ms)`);
  const record = newRecord(i, h.pid, h.logFile, true);
  return { entry: local(i, h.pid, true, record, o.creds), record };
}

async function upExternal(kind: ServerKind, url: string, log: Log): Promise<Entry> {
  const r = await kind.probe(url);
  if (!r.ok) {
    throw new StackError(
      `${kind.name}: external server ${kind.urlVariable}=${redactUrl(url)} does not answer: ${r.detail ?? 'no answer'}`,
      kind.name,
    );
  }
  log(`${kind.name}: using external ${redactUrl(url)} (${kind.urlVariable})`);
  return external(kind, url, true);
}

interface UpOptions {
  creds: Credentials;
  natsNamespace: string;
  /** METERLINE_NATS_MONITOR: open NATS's (unauthenticated) monitoring endpoint. */
  natsMonitor: boolean;
  log: Log;
}

/** A password for every server user of the instances to run. */
function credentialsFor(root: string, instances: Instance[], env: NodeJS.ProcessEnv): Credentials {
  const users = Object.fromEntries(instances.map((i) => [i.kind.name, serverUsersOf(i.kind)]));
  return ensureCredentials(root, users, env);
}

/** The servers to run: one external entry per kind given by URL, the topology's instances for the rest. */
function plan(
  root: string,
  env: NodeJS.ProcessEnv,
): { externals: [ServerKind, string][]; instances: Instance[]; settings: Record<string, string> } {
  const externals = SERVER_NAMES.flatMap((n): [ServerKind, string][] => {
    const url = externalUrl(env, SERVERS[n]);
    return url ? [[SERVERS[n], url]] : [];
  });
  const isExternal = (k: ServerKind) =>
    externals.some(([e]) => e === k) || (k === SERVERS.zookeeper && externals.some(([e]) => e === SERVERS.clickhouse));
  // An SMTP_URL of the operator's own replaces the local SMTP server, as the URL settings do theirs.
  const ownSmtp = Boolean(env.SMTP_URL?.trim());
  const instances = topology(root, env).filter((i) => !isExternal(i.kind) && !(ownSmtp && i.kind === SERVERS.smtp));
  const settings: Record<string, string> = {};
  const smtp = instances.find((i) => i.kind === SERVERS.smtp);
  if (smtp) settings.SMTP_URL = smtp.url;
  if (topologyName(env) === 'cluster') {
    if (!isExternal(SERVERS.nats)) settings.NATS_STREAM_REPLICAS = CLUSTER_SETTINGS.NATS_STREAM_REPLICAS;
    if (!isExternal(SERVERS.clickhouse)) settings.CLICKHOUSE_CLUSTER = CLUSTER_SETTINGS.CLICKHOUSE_CLUSTER;
  }
  return { externals, instances, settings };
}

/** ClickHouse replicas need ZooKeeper up first: in a cluster the servers start in two waves. */
function waves(instances: Instance[]): Instance[][] {
  if (!instances.some((i) => i.cluster)) return [instances];
  const late = (i: Instance) => i.kind === SERVERS.clickhouse;
  return [instances.filter((i) => !late(i)), instances.filter(late)];
}

/**
 * A NATS cluster elects its JetStream meta leader after its nodes answer; streams can be made only then. Asked
 * over the client port (the HTTP monitor is off by default, docs/limits.md). One host of an inventory cannot make
 * a majority alone: there a missing leader is reported, not an error (the other hosts' nodes may start later).
 */
async function jetstreamReady(instances: Instance[], log: Log, hosts: boolean, creds: Credentials): Promise<void> {
  const node = instances.find((i) => i.kind === SERVERS.nats && i.cluster);
  if (!node) return;
  const url = node.kind.url(node.ports, node.host ?? '127.0.0.1', loginOf(node.kind, creds.nats, 'admin'));
  try {
    log(`nats cluster: ${await waitForJetstreamLeader(url)}`);
  } catch (e) {
    if (!hosts) throw e;
    log(`nats cluster: ${(e as Error).message} — start the NATS nodes of the other hosts`);
  }
}

/**
 * Bring the stack up (idempotent). Starts the servers in parallel; if any fails, the others are
 * still recorded (so `stackDown` can stop them) and a StackError describing every failure is thrown.
 */
export async function stackUp(o: { root: string; env?: NodeJS.ProcessEnv; log?: Log }): Promise<StackInfo> {
  const root = path.resolve(o.root);
  const env = o.env ?? process.env;
  const { externals, instances, settings } = plan(root, env);
  await mkdir(stackDataDir(root, env), { recursive: true });
  // The invoice PDFs' fonts (issue 46): installed like the servers, before anything renders a PDF.
  await ensureFonts();
  return withLock(
    root,
    async () => {
      const state = readState(root, env);
      const up: UpOptions = {
        creds: credentialsFor(root, instances, env),
        natsNamespace: env.NATS_NAMESPACE ?? '',
        natsMonitor: /^(1|true|yes|on)$/i.test(env.METERLINE_NATS_MONITOR ?? ''),
        log: o.log ?? (() => undefined),
      };
      const failures: StackError[] = [];
      const entries: Entry[] = [];
      /** Servers this call started (not reused): stopped again if another server fails to start. */
      const started: string[] = [];
      const settle = <T>(name: string, kind: ServerName, p: Promise<T>, ok: (v: T) => void) =>
        p.then(ok, (e: unknown) => {
          failures.push(toError(name, kind, e));
          if (state.servers[name] && !isAlive(state.servers[name].pid)) delete state.servers[name];
        });
      await Promise.all(
        externals.map(([k, url]) => settle(k.name, k.name, upExternal(k, url, up.log), (e) => entries.push(e))),
      );
      for (const wave of waves(instances)) {
        if (failures.length) break;
        await Promise.all(
          wave.map((i) =>
            settle(i.name, i.kind.name, upInstance(i, state.servers[i.name], up), (r) => {
              entries.push(r.entry);
              if (r.record.pid !== state.servers[i.name]?.pid) started.push(i.name);
              state.servers[i.name] = r.record;
            }),
          ),
        );
      }
      // A half-started stack is not left behind: a caller that fails here (the test runner, CI) would
      // otherwise leave servers holding the ports the next attempt needs. Servers that were already running
      // before this call stay up.
      if (failures.length) await stopStarted(started, state, up.log);
      writeState(root, state, env);
      throwAll(failures, 'servers failed to start');
      await jetstreamReady(instances, up.log, topologyName(env) === 'hosts', up.creds);
      return info(entries, settings);
    },
    env,
  );
}

async function stopStarted(names: string[], state: ReturnType<typeof readState>, log: Log): Promise<void> {
  await Promise.all(
    names.map(async (name) => {
      const rec = state.servers[name]!;
      const kind = SERVERS[(rec.kind ?? name) as keyof typeof SERVERS];
      try {
        await stopPid(rec.pid, 30_000, kind?.stopSignal);
        delete state.servers[name];
        log(`${name}: stopped (pid ${rec.pid}) since another server failed to start`);
      } catch (e) {
        log(`${name}: could not be stopped after another server failed to start: ${String(e)}`);
      }
    }),
  );
}

function sortServers<T extends { name: string }>(servers: T[]): T[] {
  // The SMTP server, which meterline can do without, after the servers it needs.
  const order = (s: T) =>
    s.name === 'smtp' ? SERVER_NAMES.length : SERVER_NAMES.findIndex((n) => s.name.startsWith(n));
  return servers.sort((a, b) => order(a) - order(b) || a.name.localeCompare(b.name));
}

/**
 * Stop the servers recorded in stack.json (those still alive and ours), forget them, and report what
 * was stopped. External servers are never recorded, so never stopped.
 */
export async function stackDown(o: {
  root: string;
  env?: NodeJS.ProcessEnv;
}): Promise<{ stopped: { name: string; pid: number }[] }> {
  const root = path.resolve(o.root);
  const env = o.env ?? process.env;
  await mkdir(stackDataDir(root, env), { recursive: true });
  return withLock(
    root,
    async () => {
      const state = readState(root, env);
      const stopped: { name: string; pid: number }[] = [];
      const errors: StackError[] = [];
      await Promise.all(
        Object.entries(state.servers).map(async ([name, rec]) => {
          const kind = SERVERS[(rec.kind ?? name) as keyof typeof SERVERS];
          if (kind && ownsPid(rec.pid, rec.dir ?? path.join(stackDataDir(root, env), name))) {
            try {
              await stopPid(rec.pid, 30_000, kind.stopSignal);
              stopped.push({ name, pid: rec.pid });
            } catch (e) {
              return errors.push(toError(name, kind.name, e)); // keep the record: it is still running
            }
          }
          delete state.servers[name];
        }),
      );
      writeState(root, state, env);
      throwAll(errors, 'servers failed to stop');
      return { stopped: sortServers(stopped) };
    },
    env,
  );
}

/** Report the state of the stack without starting or stopping anything. */
export async function stackStatus(o: { root: string; env?: NodeJS.ProcessEnv }): Promise<StackInfo> {
  const root = path.resolve(o.root);
  const env = o.env ?? process.env;
  const { externals, instances, settings } = plan(root, env);
  const state = readState(root, env);
  const creds = readCredentials(root, env);
  const entries = await Promise.all([
    ...externals.map(async ([k, url]) => external(k, url, (await k.probe(url)).ok)),
    ...instances.map(async (i) => {
      const c = candidates(i, state.servers[i.name], creds)[0];
      if (!c) return local(i, null, false, state.servers[i.name], creds);
      return local(i, c.pid, (await i.kind.probe(profileUrls(i, c, creds).admin)).ok, c, creds);
    }),
  ]);
  return info(entries, settings);
}

/**
 * Every server and role process of the stack, for an operator or a test to find the one to stop: the
 * servers' pids and ports, and the role processes `meterline up` is supervising (alive ones).
 */
export async function stackProcesses(o: { root: string; env?: NodeJS.ProcessEnv }): Promise<ProcessEntry[]> {
  const st = await stackStatus(o);
  const servers = st.servers
    .filter((s) => s.pid !== null && s.running)
    .map((s) => ({ name: s.name, kind: s.kind, pid: s.pid!, ports: Object.values(s.ports ?? {}) }));
  return [...servers, ...readRoleProcesses(path.resolve(o.root), o.env).filter((p) => isAlive(p.pid))];
}
