/**
 * nats-server with JetStream in the local stack: the Debian package and binary, the generated config,
 * start, readiness probe (an INFO line announcing JetStream), stop, URL.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { findOnPath } from './install.js';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { NatsNames, natsServerOptions } from '../../shared/clients/nats.js';
import {
  launch,
  loginOf,
  named,
  READY_TIMEOUT_MS,
  requireCommand,
  type InstanceOptions,
  type Login,
  type Ports,
  type Profile,
  type ServerHandle,
  type ServerKind,
} from './launch.js';
import { PROBE_TIMEOUT_MS, probing, stripBrackets, urlHost, type ProbeResult } from './probe.js';
import { errMessage, waitFor } from './process.js';

export interface NatsOptions {
  dir: string;
  port: number;
  /** HTTP monitoring port, on loopback (it takes no credentials in 2.9); none when unset. */
  monitorPort?: number;
  host?: string;
  /** JetStream file store limit (default 8 GiB). */
  maxStoreBytes?: number;
  timeoutMs?: number;
  /** User → password (`admin` and one per role, with the role's permissions). Unset: anyone may connect. */
  passwords?: Record<string, string>;
  /** The NATS_NAMESPACE the roles' permissions are written for (default: none). */
  namespace?: string;
  /** One node of a NATS cluster: its route port and the other nodes' route addresses. */
  cluster?: { name: string; serverName: string; port: number; routes: { host: string; port: number }[] };
}

type Permissions = { publish: string[]; subscribe: string[] };

/** The JetStream API requests that read or watch a KV bucket and write its keys. */
function kvAccess(bucket: string): string[] {
  const stream = `KV_${bucket}`;
  return [
    `$KV.${bucket}.>`,
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}`,
    `$JS.API.DIRECT.GET.${stream}.>`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.*`,
    `$JS.API.CONSUMER.DELETE.${stream}.*`,
    `$JS.FC.${stream}.>`,
  ];
}

/** The JetStream API requests and acks of a durable pull consumer (created or updated by its role). */
function durableAccess(stream: string, durable: string): string[] {
  const name = `${stream}.${durable}`;
  return [
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.CONSUMER.INFO.${name}`,
    `$JS.API.CONSUMER.CREATE.${name}`,
    `$JS.API.CONSUMER.CREATE.${name}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${name}`,
    `$JS.API.CONSUMER.MSG.NEXT.${name}`,
    `$JS.ACK.${name}.>`,
  ];
}

/**
 * What each role may publish (subjects and JetStream API requests); every role receives replies on
 * `_INBOX.>` (and the api the usage moved signal) only. `admin` (migrations, operator tools, the tests' isolated worlds) may do anything.
 */
export function rolePermissions(names: NatsNames): Record<Exclude<Profile, 'admin' | 'migrate'>, Permissions> {
  const role = (publish: string[], subscribe: string[] = []): Permissions => ({
    publish: ['$JS.API.INFO', ...publish],
    subscribe: ['_INBOX.>', ...subscribe],
  });
  return {
    // The "usage moved" signal: the consumer (and the api, applying a correction) sends it, every api listens.
    api: role(
      [
        names.usageSubjects,
        names.usageMovedSubject,
        `$JS.API.STREAM.INFO.${names.usageStream}`,
        ...[
          names.meterBucket,
          names.customerBucket,
          names.revocationBucket,
          names.webhookUsageBucket,
          names.limitsBucket,
          names.apiProcessBucket,
          names.rateBucket,
          names.signInThrottleBucket,
        ].flatMap(kvAccess),
      ],
      [names.usageMovedSubject],
    ),
    consumer: role([
      names.usageMovedSubject,
      ...durableAccess(names.usageStream, names.usageConsumer),
      ...[names.meterBucket, names.webhookUsageBucket].flatMap(kvAccess),
    ]),
    dispatcher: role([
      names.eventSubjects,
      ...durableAccess(names.eventsStream, names.fanoutConsumer),
      ...kvAccess(names.webhookUsageBucket),
    ]),
    billing: role([]),
  };
}

function authorization(passwords: Record<string, string>, namespace: string): string[] {
  const perms = rolePermissions(new NatsNames(namespace)) as Record<string, Permissions>;
  const users = Object.entries(passwords).map(([user, password]) => {
    const p = perms[user];
    const permissions = p
      ? `, permissions: { publish: { allow: ${JSON.stringify(p.publish)} }, subscribe: { allow: ${JSON.stringify(p.subscribe)} } }`
      : '';
    return `    { user: ${JSON.stringify(user)}, password: ${JSON.stringify(password)}${permissions} }`;
  });
  return ['authorization {', '  users: [', ...users, '  ]', '}'];
}

function natsConfig(o: NatsOptions, host: string, storeDir: string): string {
  return [
    `# generated by infra/stack/nats.ts; rewritten on every start`,
    `server_name: ${JSON.stringify(o.cluster?.serverName ?? `meterline-${o.port}`)}`,
    `listen: ${JSON.stringify(`${urlHost(host)}:${o.port}`)}`,
    ...(o.monitorPort !== undefined ? [`http: ${JSON.stringify(`127.0.0.1:${o.monitorPort}`)}`] : []),
    `max_payload: 8MB`,
    ...(o.cluster
      ? [
          // A peer whose host vanished (no FIN, no RST) must be noticed in seconds, not at the 2-minute default:
          // until its route is closed, JetStream's meta and KV requests routed through it stall.
          `ping_interval: "2s"`,
          `ping_max: 3`,
          `write_deadline: "3s"`,
          `cluster {`,
          `  name: ${JSON.stringify(o.cluster.name)}`,
          `  listen: ${JSON.stringify(`${urlHost(host)}:${o.cluster.port}`)}`,
          `  routes: ${JSON.stringify(o.cluster.routes.map((r) => `nats-route://${urlHost(r.host)}:${r.port}`))}`,
          `}`,
        ]
      : []),
    `jetstream {`,
    `  store_dir: ${JSON.stringify(storeDir)}`,
    `  max_file_store: ${Math.floor(o.maxStoreBytes ?? 8 * 1024 ** 3)}`,
    `  max_memory_store: ${1024 ** 3}`,
    `}`,
    ...(o.passwords ? authorization(o.passwords, o.namespace ?? '') : []),
    ``,
  ].join('\n');
}

export function startNats(o: NatsOptions): Promise<ServerHandle> {
  return named('nats', async () => {
    const dir = path.resolve(o.dir);
    const host = o.host ?? '127.0.0.1';
    const confFile = path.join(dir, 'nats.conf');
    const storeDir = path.join(dir, 'js');
    await mkdir(storeDir, { recursive: true });
    await writeFile(confFile, natsConfig(o, host, storeDir), { mode: 0o600 });
    await chmod(confFile, 0o600); // it holds the passwords
    const logFile = nats.logFile(dir);
    return launch({
      server: 'nats',
      command: requireCommand(nats),
      args: ['-c', confFile],
      dir,
      stdoutLog: logFile,
      logFile,
      url: nats.url({ client: o.port }, host, loginOf(nats, o.passwords, 'admin')),
      probe: nats.probe,
      stopSignal: nats.stopSignal,
      ports: [
        { port: o.port, role: 'client port' },
        ...(o.monitorPort !== undefined ? [{ port: o.monitorPort, role: 'monitoring port' }] : []),
        ...(o.cluster ? [{ port: o.cluster.port, role: 'cluster route port' }] : []),
      ],
      host,
      timeoutMs: o.timeoutMs,
    });
  });
}

/** Host and port of each server in a (comma-separated) NATS URL. */
function natsEndpoints(url: string): { host: string; port: number }[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : `nats://${s}`);
      return { host: stripBrackets(u.hostname) || '127.0.0.1', port: u.port ? Number(u.port) : 4222 };
    });
}

/** The server's first line must be INFO announcing JetStream. */
function judgeInfo(line: string): ProbeResult {
  if (!line.startsWith('INFO '))
    return { ok: false, detail: `not a NATS server (got ${JSON.stringify(line.slice(0, 80))})` };
  let info: { jetstream?: boolean; version?: string };
  try {
    info = JSON.parse(line.slice(5)) as typeof info;
  } catch {
    return { ok: false, detail: 'unparsable INFO line' };
  }
  if (info.jetstream !== true)
    return { ok: false, detail: `NATS ${info.version ?? '?'} answers but JetStream is not enabled` };
  return { ok: true, detail: `nats-server ${info.version ?? '?'} with JetStream` };
}

function readNatsInfo(host: string, port: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let buf = '';
    const sock = net.connect({ host, port });
    const finish = (r: ProbeResult) => {
      sock.destroy();
      resolve(r); // later calls are no-ops
    };
    sock.setTimeout(PROBE_TIMEOUT_MS, () =>
      finish({ ok: false, detail: `no INFO from ${host}:${port} within ${PROBE_TIMEOUT_MS} ms` }),
    );
    sock.on('error', (e) => finish({ ok: false, detail: errMessage(e) }));
    sock.on('close', () => finish({ ok: false, detail: `connection to ${host}:${port} closed before INFO` }));
    sock.on('data', (d) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\r\n');
      if (nl >= 0) finish(judgeInfo(buf.slice(0, nl)));
      else if (buf.length > 64 * 1024) finish({ ok: false, detail: 'INFO line too long' });
    });
  });
}

/** Ready when any server of the URL list answers. */
function probeNats(url: string): Promise<ProbeResult> {
  return probing(async () => {
    const targets = natsEndpoints(url);
    if (targets.length === 0) return { ok: false, detail: 'empty NATS URL' };
    const details: string[] = [];
    for (const t of targets) {
      const r = await readNatsInfo(t.host, t.port);
      if (r.ok) return r;
      details.push(r.detail ?? 'unknown');
    }
    return { ok: false, detail: details.join('; ') };
  });
}

export const nats: ServerKind = {
  name: 'nats',
  debianPackage: 'nats-server',
  binaryDescription: 'nats-server',
  command: () => {
    const p = findOnPath('nats-server');
    return p ? { command: p, args: [] } : null;
  },
  stopSignal: 'SIGTERM',
  urlVariable: 'NATS_URL',
  defaultPorts: { client: 54222, monitor: 58222 },
  userOf: {
    admin: 'admin',
    migrate: 'admin',
    api: 'api',
    consumer: 'consumer',
    dispatcher: 'dispatcher',
    billing: 'billing',
  },
  logFile: (dir) => path.join(dir, 'nats.log'),
  url: (ports: Ports, host = '127.0.0.1', login?: Login) =>
    `nats://${login ? `${login.user}:${encodeURIComponent(login.password)}@` : ''}${urlHost(host)}:${ports.client}`,
  start: (o: InstanceOptions) =>
    startNats({
      dir: o.dir,
      port: o.ports.client,
      // The port stays reserved for it, so a stack's ports don't move when an operator opens it.
      monitorPort: o.openMonitor ? o.ports.monitor : undefined,
      host: o.host,
      timeoutMs: o.timeoutMs,
      passwords: o.passwords,
      namespace: o.natsNamespace,
      cluster: o.cluster && {
        name: o.cluster.name,
        serverName: o.cluster.self,
        port: o.ports.cluster!,
        routes: o.cluster.peers
          .filter((p) => p.name !== o.cluster!.self)
          .map((p) => ({ host: p.host ?? o.host ?? '127.0.0.1', port: p.ports.cluster! })),
      },
    }),
  probe: probeNats,
};

/**
 * A NATS cluster takes a moment after its nodes answer to elect a JetStream meta leader; streams can't be
 * created before. Ready when the JetStream API answers an authenticated client (`url` carries the admin
 * login): only a meta leader answers account information.
 */
export async function jetstreamClusterReady(url: string): Promise<ProbeResult> {
  return probing(async () => {
    const nc = await connect({ ...natsServerOptions(url), reconnect: false, timeout: PROBE_TIMEOUT_MS });
    try {
      const info = await (await jetstreamManager(nc, { timeout: PROBE_TIMEOUT_MS })).getAccountInfo();
      return { ok: true, detail: `JetStream answers (${info.streams} streams)` };
    } finally {
      await nc.close();
    }
  });
}

/** Waits (up to READY_TIMEOUT_MS) for a NATS cluster's JetStream meta leader; what the check last said. */
export async function waitForJetstreamLeader(url: string): Promise<string> {
  let detail = '';
  await waitFor(
    async () => {
      const r = await jetstreamClusterReady(url);
      detail = r.detail ?? '';
      return r.ok;
    },
    { timeoutMs: READY_TIMEOUT_MS, intervalMs: 200, what: 'the NATS cluster to elect a JetStream leader' },
  );
  return detail;
}
