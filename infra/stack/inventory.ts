/**
 * Several hosts (docs/hosts.md): one inventory file, the same on every host, lists the hosts — each
 * its name, its address, the servers it runs and the roles it runs — the ports (the same on every host) and the
 * settings every role shares. Beside it live the files every host shares: `credentials.json` (a password per
 * server user) and `secret.key` (SECRET_KEY), made once by `meterline hosts init` and copied with the inventory.
 * A host knows which one it is from METERLINE_HOST; METERLINE_INVENTORY names the file. With both set,
 * `meterline stack up` starts this host's servers (topology.ts `hostTopology`) and `meterline up` this host's
 * roles against every host's servers (`roleEnvironment`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { StackError } from './errors.js';
import { PROFILES, type Profile } from './launch.js';

export const INVENTORY_VARIABLE = 'METERLINE_INVENTORY';
export const HOST_VARIABLE = 'METERLINE_HOST';

export const HOST_SERVERS = ['postgres', 'nats', 'zookeeper', 'clickhouse'] as const;
export type HostServer = (typeof HOST_SERVERS)[number];
export const HOST_ROLES = PROFILES.filter((p) => p !== 'admin' && p !== 'migrate') as Exclude<
  Profile,
  'admin' | 'migrate'
>[];
export type HostRole = (typeof HOST_ROLES)[number];

/** The ports every host uses (defaults: the servers' usual ones). */
export const DEFAULT_HOST_PORTS = {
  postgres: 5432,
  nats: 4222,
  nats_monitor: 8222,
  nats_cluster: 6222,
  zookeeper: 2181,
  zookeeper_peer: 2888,
  zookeeper_election: 3888,
  clickhouse_http: 8123,
  clickhouse_tcp: 9000,
  clickhouse_interserver: 9009,
  api: 8080,
  consumer_metrics: 9464,
  dispatcher_metrics: 9465,
  billing_metrics: 9466,
};
export type HostPorts = typeof DEFAULT_HOST_PORTS;

export interface HostSpec {
  name: string;
  /** The address its servers and roles listen on and the other hosts reach it at. */
  address: string;
  servers: HostServer[];
  roles: HostRole[];
  /** Its ClickHouse replica's shard (1-based; default 1: every replica holds every account). */
  shard: number;
}

export interface Inventory {
  file: string;
  /** Name of the NATS cluster and of the ClickHouse cluster (CLICKHOUSE_CLUSTER). */
  cluster: string;
  hosts: HostSpec[];
  ports: HostPorts;
  /** Configuration variables every role gets (PUBLIC_BASE_URL, limits, …). */
  settings: Record<string, string>;
  /** Addresses besides the hosts allowed to connect to the servers (an operator's machine, Prometheus, backups). */
  clients: string[];
}

/** Variables the inventory derives per host and role: not settable under `settings`. */
const DERIVED = [
  'DATABASE_URL',
  'NATS_URL',
  'CLICKHOUSE_URL',
  'CLICKHOUSE_CLUSTER',
  'NATS_STREAM_REPLICAS',
  'HOST',
  'PORT',
  'METRICS_HOST',
  'METRICS_PORT',
  'SECRET_KEY',
];

type Raw = Record<string, unknown>;

function isRecord(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks an inventory document; every problem is listed at once. */
export function parseInventory(doc: unknown, file: string): Inventory {
  const problems: string[] = [];
  const d = isRecord(doc) ? doc : {};
  if (!isRecord(doc)) problems.push('must be a JSON object');
  const cluster = typeof d.cluster === 'string' && /^[a-z][a-z0-9_]{0,30}$/.test(d.cluster) ? d.cluster : 'meterline';
  if (d.cluster !== undefined && cluster !== d.cluster) problems.push('cluster: must match [a-z][a-z0-9_]{0,30}');
  const ports = { ...DEFAULT_HOST_PORTS };
  for (const [k, v] of Object.entries(isRecord(d.ports) ? d.ports : {})) {
    if (!(k in ports)) problems.push(`ports.${k}: unknown port (known: ${Object.keys(ports).join(', ')})`);
    else if (!Number.isInteger(v) || (v as number) < 1 || (v as number) > 65535)
      problems.push(`ports.${k}: must be a port number`);
    else ports[k as keyof HostPorts] = v as number;
  }
  const settings: Record<string, string> = {};
  for (const [k, v] of Object.entries(isRecord(d.settings) ? d.settings : {})) {
    if (DERIVED.includes(k)) problems.push(`settings.${k}: derived from the inventory, not set here`);
    else if (typeof v !== 'string') problems.push(`settings.${k}: must be a string`);
    else settings[k] = v;
  }
  const clients = Array.isArray(d.clients) ? (d.clients as unknown[]) : [];
  if (d.clients !== undefined && !Array.isArray(d.clients)) problems.push('clients: must be a list of addresses');
  for (const c of clients)
    if (typeof c !== 'string' || !/^[A-Za-z0-9.:-]+$/.test(c))
      problems.push(`clients: "${String(c)}" is not an IP address or host name`);
  const hosts: HostSpec[] = [];
  const list = Array.isArray(d.hosts) ? d.hosts : [];
  if (list.length === 0) problems.push('hosts: must list at least one host');
  list.forEach((h: unknown, i) => {
    const at = `hosts[${i}]`;
    const r = isRecord(h) ? h : {};
    const name = typeof r.name === 'string' && /^[a-z0-9][a-z0-9-]{0,40}$/.test(r.name) ? r.name : '';
    if (!name) problems.push(`${at}.name: must match [a-z0-9][a-z0-9-]{0,40}`);
    const address = typeof r.address === 'string' && /^[A-Za-z0-9.:-]+$/.test(r.address) ? r.address : '';
    if (!address) problems.push(`${at}.address: must be an IP address or host name`);
    const servers = Array.isArray(r.servers) ? (r.servers as unknown[]) : [];
    for (const s of servers)
      if (!HOST_SERVERS.includes(s as HostServer))
        problems.push(`${at}.servers: "${String(s)}" is not one of ${HOST_SERVERS.join(', ')}`);
    const roles = Array.isArray(r.roles) ? (r.roles as unknown[]) : [];
    for (const s of roles)
      if (!HOST_ROLES.includes(s as HostRole))
        problems.push(`${at}.roles: "${String(s)}" is not one of ${HOST_ROLES.join(', ')}`);
    const shard = r.shard === undefined ? 1 : Number(r.shard);
    if (!Number.isInteger(shard) || shard < 1) problems.push(`${at}.shard: must be a positive integer`);
    hosts.push({
      name,
      address,
      servers: HOST_SERVERS.filter((s) => servers.includes(s)),
      roles: HOST_ROLES.filter((s) => roles.includes(s)),
      shard,
    });
  });
  const unique = (what: 'name' | 'address') => {
    const seen = hosts.map((h) => h[what]).filter((v, i, a) => v && a.indexOf(v) !== i);
    if (seen.length) problems.push(`hosts: ${what} ${[...new Set(seen)].join(', ')} used twice`);
  };
  unique('name');
  unique('address');
  const runs = (s: HostServer) => hosts.filter((h) => h.servers.includes(s));
  if (runs('postgres').length > 1) problems.push('hosts: at most one host may run postgres (none: DATABASE_URL)');
  if (runs('nats').length === 0) problems.push('hosts: at least one host must run nats');
  if (runs('nats').length === 2) problems.push('hosts: run 1 or at least 3 nats nodes (JetStream needs a majority)');
  if (runs('clickhouse').length === 0) problems.push('hosts: at least one host must run clickhouse');
  if (runs('clickhouse').length > 1 && runs('zookeeper').length === 0)
    problems.push('hosts: replicated ClickHouse needs zookeeper on at least one host');
  if (runs('zookeeper').length === 2) problems.push('hosts: run 1 or at least 3 zookeeper nodes (a majority)');
  if (hosts.filter((h) => h.roles.includes('api')).length > 1 && !settings.PUBLIC_BASE_URL)
    problems.push(
      'settings.PUBLIC_BASE_URL: required with api on several hosts (the load balancer’s URL: the OAuth issuer)',
    );
  const shards = [...new Set(runs('clickhouse').map((h) => h.shard))].sort((a, b) => a - b);
  if (shards.some((s, i) => s !== i + 1))
    problems.push(`hosts: ClickHouse shards must be numbered 1..N, got ${shards}`);
  if (problems.length) throw new StackError(`inventory ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  return { file, cluster, hosts, ports, settings, clients: clients as string[] };
}

export function readInventory(file: string): Inventory {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new StackError(`${INVENTORY_VARIABLE}: cannot read ${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new StackError(`inventory ${file}: not JSON: ${(e as Error).message}`);
  }
  return parseInventory(doc, path.resolve(file));
}

/** The directory holding the inventory and the files every host shares (credentials.json, secret.key). */
export function inventoryDir(inv: Inventory): string {
  return path.dirname(inv.file);
}

/** This host in its inventory, from METERLINE_INVENTORY and METERLINE_HOST; null when neither is set. */
export function selectedHost(env: NodeJS.ProcessEnv): { inventory: Inventory; host: HostSpec } | null {
  const file = env[INVENTORY_VARIABLE]?.trim();
  const name = env[HOST_VARIABLE]?.trim();
  if (!file && !name) return null;
  if (!file || !name)
    throw new StackError(`set both ${INVENTORY_VARIABLE} (the inventory file) and ${HOST_VARIABLE} (this host's name)`);
  const inventory = readInventory(file);
  const host = inventory.hosts.find((h) => h.name === name);
  if (!host)
    throw new StackError(
      `${HOST_VARIABLE}=${name} is not in ${file} (hosts: ${inventory.hosts.map((h) => h.name).join(', ')})`,
    );
  return { inventory, host };
}

/** The hosts running a server, in inventory order. */
export function hostsRunning(inv: Inventory, server: HostServer): HostSpec[] {
  return inv.hosts.filter((h) => h.servers.includes(server));
}
