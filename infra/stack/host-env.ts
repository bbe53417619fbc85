/**
 * What a process on one host of an inventory connects to (inventory.ts): every host's servers, this host's
 * first (its own NATS node and ClickHouse replica are the nearest), each profile with its own login from the
 * shared credentials.json, and the settings the roles need on a cluster. `meterline up` runs this host's roles
 * with it; `meterline migrate`, `accounts …` and `backup …` use the `migrate` profile's.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Credentials } from './credentials.js';
import { StackError } from './errors.js';
import { hostsRunning, inventoryDir, type HostRole, type HostSpec, type Inventory } from './inventory.js';
import { loginOf, type Profile } from './launch.js';
import { SERVERS } from './servers.js';
import { hostPorts } from './topology.js';

export const SECRET_FILE = 'secret.key';

/** SECRET_KEY every host shares: `secret.key` beside the inventory (`meterline hosts init` writes it). */
export function inventorySecret(inv: Inventory): string {
  const file = path.join(inventoryDir(inv), SECRET_FILE);
  try {
    const key = readFileSync(file, 'utf8').trim();
    if (key) return key;
  } catch {
    /* reported below */
  }
  throw new StackError(
    `${file} is missing: run \`meterline hosts init\` on one host and copy the directory to the others`,
  );
}

/** This host first, then the others in inventory order. */
function nearestFirst(hosts: HostSpec[], self: HostSpec): HostSpec[] {
  return [...hosts.filter((h) => h.name === self.name), ...hosts.filter((h) => h.name !== self.name)];
}

/** The server URLs and settings a profile connects with from `host`. */
export function profileEnvironment(
  inv: Inventory,
  host: HostSpec,
  creds: Credentials,
  profile: Profile,
): Record<string, string> {
  const url = (server: 'postgres' | 'nats' | 'clickhouse', hosts: HostSpec[]) =>
    hosts
      .map((h) =>
        SERVERS[server].url(hostPorts(inv, server), h.address, loginOf(SERVERS[server], creds[server], profile)),
      )
      .join(',');
  const nats = hostsRunning(inv, 'nats');
  const clickhouse = hostsRunning(inv, 'clickhouse');
  return {
    ...inv.settings,
    // No host runs Postgres: DATABASE_URL comes from the environment (a managed Postgres).
    ...(hostsRunning(inv, 'postgres').length ? { DATABASE_URL: url('postgres', hostsRunning(inv, 'postgres')) } : {}),
    NATS_URL: url('nats', nearestFirst(nats, host)),
    NATS_STREAM_REPLICAS: String(nats.length >= 3 ? 3 : 1),
    CLICKHOUSE_URL: url('clickhouse', nearestFirst(clickhouse, host)),
    CLICKHOUSE_CLUSTER: clickhouse.length > 1 ? inv.cluster : '',
    SECRET_KEY: inventorySecret(inv),
  };
}

/** A role process's whole environment on `host`: its servers, its listening address and ports. */
export function roleEnvironment(
  inv: Inventory,
  host: HostSpec,
  creds: Credentials,
  role: HostRole,
): Record<string, string> {
  const metricsPort = role === 'api' ? inv.ports.api : inv.ports[`${role}_metrics`];
  return {
    ...profileEnvironment(inv, host, creds, role),
    HOST: host.address,
    PORT: String(inv.ports.api),
    METRICS_HOST: host.address,
    METRICS_PORT: String(metricsPort),
  };
}
