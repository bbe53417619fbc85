/**
 * Which server instances a stack runs, each with its own directory and ports. The single topology is
 * one instance of each server, named after it, under `.data/<server>/`, on the ports in docs/operations.md —
 * or, with METERLINE_STACK_PORT_BASE=N, on N, N+1, … (in SERVER_NAMES order, each server's ports in
 * its `defaultPorts` order), so a second stack can run beside the first. A cluster topology is a
 * longer list of instances (several of a kind, each with its ports) built the same way.
 */
import path from 'node:path';
import { SERVER_NAMES, StackError } from './errors.js';
import type { ClusterPlace, Ports, ServerKind } from './launch.js';
import { SERVERS } from './servers.js';
import { stackDataDir, topologyName } from './state.js';
import { hostsRunning, selectedHost, type HostServer, type HostSpec, type Inventory } from './inventory.js';

export const PORT_BASE_VARIABLE = 'METERLINE_STACK_PORT_BASE';

export interface Instance {
  /** Unique in the stack: the server's name in the single topology. */
  name: string;
  kind: ServerKind;
  dir: string;
  ports: Ports;
  url: string;
  /** Its place in a cluster topology; none in the single topology. */
  cluster?: ClusterPlace;
  /** The address it listens on (default 127.0.0.1) and the other addresses allowed to connect (hosts topology). */
  host?: string;
  clients?: string[];
}

function portBase(env: NodeJS.ProcessEnv, count: number): number | null {
  const raw = env[PORT_BASE_VARIABLE]?.trim();
  if (!raw) return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1024 || n + count - 1 > 65535) {
    throw new StackError(`${PORT_BASE_VARIABLE} must be an integer from 1024 to ${65536 - count}, got "${raw}"`);
  }
  return n;
}

/** Ports for each instance: the defaults, or consecutive ones from the port base. */
function assignPorts(kinds: ServerKind[], base: number | null): Ports[] {
  let next = base ?? 0;
  return kinds.map((k) =>
    base === null ? { ...k.defaultPorts } : Object.fromEntries(Object.keys(k.defaultPorts).map((p) => [p, next++])),
  );
}

/** The instances of METERLINE_TOPOLOGY's topology. */
export function topology(root: string, env: NodeJS.ProcessEnv): Instance[] {
  const name = topologyName(env);
  if (name === 'hosts') return hostTopology(root, env);
  return name === 'cluster' ? clusterTopology(root, env) : singleTopology(root, env);
}

/** The single topology runs a local SMTP server too, after the others' ports (smtp.ts): `npm start`'s SMTP_URL. */
export function singleTopology(root: string, env: NodeJS.ProcessEnv): Instance[] {
  const kinds = [...SERVER_NAMES.map((n) => SERVERS[n]), SERVERS.smtp];
  const count = kinds.reduce((sum, k) => sum + Object.keys(k.defaultPorts).length, 0);
  const ports = assignPorts(kinds, portBase(env, count));
  return kinds.map((kind, i) => ({
    name: kind.name,
    kind,
    dir: path.join(stackDataDir(root, env), kind.name),
    ports: ports[i]!,
    url: kind.url(ports[i]!),
  }));
}

/** The local cluster's shape (docs/operations.md "Running on more than one machine"). */
export const CLUSTER_SHAPE = { natsNodes: 3, clickhouseShards: 2, clickhouseReplicas: 2 } as const;
/** The name of the NATS cluster and of the ClickHouse cluster (CLICKHOUSE_CLUSTER). */
export const CLUSTER_NAME = 'meterline';
/** The cluster's first port without METERLINE_STACK_PORT_BASE: clear of the single stack's defaults and below the ephemeral range (32768+) where an outgoing connection may hold a port. */
export const CLUSTER_PORT_BASE = 26100;

/** Settings the roles need on the local cluster beyond the server URLs. */
export const CLUSTER_SETTINGS = {
  NATS_STREAM_REPLICAS: String(CLUSTER_SHAPE.natsNodes),
  CLICKHOUSE_CLUSTER: CLUSTER_NAME,
};

/**
 * One Postgres, three NATS nodes (client, monitor and route ports), one ZooKeeper, and ClickHouse as
 * 2 shards × 2 replicas, on consecutive ports from METERLINE_STACK_PORT_BASE (default CLUSTER_PORT_BASE),
 * each under `.data/cluster/<name>/`.
 */
export function clusterTopology(root: string, env: NodeJS.ProcessEnv): Instance[] {
  const layout: { name: string; kind: ServerKind; ports: string[] }[] = [
    { name: 'postgres', kind: SERVERS.postgres, ports: Object.keys(SERVERS.postgres.defaultPorts) },
    ...Array.from({ length: CLUSTER_SHAPE.natsNodes }, (_v, i) => ({
      name: `nats-${i + 1}`,
      kind: SERVERS.nats,
      ports: ['client', 'monitor', 'cluster'],
    })),
    { name: 'zookeeper', kind: SERVERS.zookeeper, ports: ['client'] },
    ...Array.from({ length: CLUSTER_SHAPE.clickhouseShards * CLUSTER_SHAPE.clickhouseReplicas }, (_v, i) => ({
      name: `clickhouse-s${Math.floor(i / CLUSTER_SHAPE.clickhouseReplicas) + 1}r${(i % CLUSTER_SHAPE.clickhouseReplicas) + 1}`,
      kind: SERVERS.clickhouse,
      ports: ['http', 'tcp', 'interserver'],
    })),
  ];
  const count = layout.reduce((n, l) => n + l.ports.length, 0);
  let next = portBase(env, count) ?? CLUSTER_PORT_BASE;
  const dataDir = stackDataDir(root, env);
  const placed = layout.map((l) => ({ ...l, ports: Object.fromEntries(l.ports.map((p) => [p, next++])) as Ports }));
  const peersOf = (kind: ServerKind) =>
    placed.filter((p) => p.kind === kind).map((p) => ({ name: p.name, ports: p.ports }));
  const zookeepers = [{ host: '127.0.0.1', port: placed.find((p) => p.kind === SERVERS.zookeeper)!.ports.client! }];
  const chPeers = peersOf(SERVERS.clickhouse);
  const shards = Array.from({ length: CLUSTER_SHAPE.clickhouseShards }, (_v, s) =>
    chPeers
      .slice(s * CLUSTER_SHAPE.clickhouseReplicas, (s + 1) * CLUSTER_SHAPE.clickhouseReplicas)
      .map((p) => ({ host: '127.0.0.1', ports: p.ports })),
  );
  return placed.map((p) => {
    const base = {
      name: p.name,
      kind: p.kind,
      dir: path.join(dataDir, p.name),
      ports: p.ports,
      url: p.kind.url(p.ports),
    };
    if (p.kind === SERVERS.nats)
      return { ...base, cluster: { name: CLUSTER_NAME, self: p.name, peers: peersOf(p.kind) } };
    if (p.kind === SERVERS.clickhouse) {
      const shard = Math.floor(chPeers.findIndex((c) => c.name === p.name) / CLUSTER_SHAPE.clickhouseReplicas) + 1;
      return { ...base, cluster: { name: CLUSTER_NAME, self: p.name, peers: chPeers, shard, shards, zookeepers } };
    }
    return base;
  });
}

/** An instance's ports on every host of an inventory, by server. */
export function hostPorts(inv: Inventory, server: HostServer): Ports {
  const p = inv.ports;
  switch (server) {
    case 'postgres':
      return { port: p.postgres };
    case 'nats':
      return { client: p.nats, monitor: p.nats_monitor, cluster: p.nats_cluster };
    case 'zookeeper':
      return { client: p.zookeeper, peer: p.zookeeper_peer, election: p.zookeeper_election };
    case 'clickhouse':
      return { http: p.clickhouse_http, tcp: p.clickhouse_tcp, interserver: p.clickhouse_interserver };
  }
}

/** A server's instances across the inventory, as cluster peers (named after their host). */
function peersOf(inv: Inventory, server: HostServer): { name: string; host: string; ports: Ports }[] {
  return hostsRunning(inv, server).map((h) => ({ name: h.name, host: h.address, ports: hostPorts(inv, server) }));
}

/** Where this host's instance of `server` stands among the inventory's (none when it is the only one). */
function hostPlace(inv: Inventory, host: HostSpec, server: HostServer): ClusterPlace | undefined {
  const peers = peersOf(inv, server);
  if (server === 'clickhouse') {
    if (peers.length < 2) return undefined;
    const hosts = hostsRunning(inv, 'clickhouse');
    const shardCount = Math.max(...hosts.map((h) => h.shard));
    const shards = Array.from({ length: shardCount }, (_v, i) =>
      hosts.filter((h) => h.shard === i + 1).map((h) => ({ host: h.address, ports: hostPorts(inv, server) })),
    );
    const zookeepers = hostsRunning(inv, 'zookeeper').map((h) => ({ host: h.address, port: inv.ports.zookeeper }));
    return { name: inv.cluster, self: host.name, peers, shard: host.shard, shards, zookeepers };
  }
  if ((server === 'nats' || server === 'zookeeper') && peers.length > 1)
    return { name: inv.cluster, self: host.name, peers };
  return undefined;
}

/**
 * This host's servers (METERLINE_INVENTORY, METERLINE_HOST): each listens on the host's address, on the
 * inventory's ports, accepts the other hosts as clients, and knows its peers on the other hosts (NATS routes,
 * the ZooKeeper ensemble, ClickHouse's shards and ZooKeeper). Data under `.data/hosts/<host>/<server>/`.
 */
export function hostTopology(root: string, env: NodeJS.ProcessEnv): Instance[] {
  const { inventory: inv, host } = selectedHost(env)!;
  const dataDir = stackDataDir(root, env);
  const clients = [...inv.hosts.map((h) => h.address), ...inv.clients].filter((a) => a !== '127.0.0.1');
  return host.servers.map((server) => {
    const kind = SERVERS[server];
    const ports = hostPorts(inv, server);
    return {
      name: server,
      kind,
      dir: path.join(dataDir, server),
      ports,
      url: kind.url(ports, host.address),
      cluster: hostPlace(inv, host, server),
      host: host.address,
      clients,
    };
  });
}
