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
  return topologyName(env) === 'cluster' ? clusterTopology(root, env) : singleTopology(root, env);
}

export function singleTopology(root: string, env: NodeJS.ProcessEnv): Instance[] {
  const kinds = SERVER_NAMES.map((n) => SERVERS[n]);
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
  const zookeeperPort = placed.find((p) => p.kind === SERVERS.zookeeper)!.ports.client;
  const chPeers = peersOf(SERVERS.clickhouse);
  const shards = Array.from({ length: CLUSTER_SHAPE.clickhouseShards }, (_v, s) =>
    chPeers.slice(s * CLUSTER_SHAPE.clickhouseReplicas, (s + 1) * CLUSTER_SHAPE.clickhouseReplicas).map((p) => p.ports),
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
      return { ...base, cluster: { name: CLUSTER_NAME, self: p.name, peers: chPeers, shard, shards, zookeeperPort } };
    }
    return base;
  });
}
