/**
 * The servers the local stack knows, one file each. Adding a server (ZooKeeper for the cluster
 * topology) means writing its file with a `ServerKind` and adding it here and to `SERVER_NAMES`.
 */
import type { ServerName } from './errors.js';
import type { ServerKind } from './launch.js';
import { clickhouse } from './clickhouse.js';
import { nats } from './nats.js';
import { postgres } from './postgres.js';
import { zookeeper } from './zookeeper.js';
import { smtp } from './smtp.js';

export const SERVERS: Record<Exclude<ServerName, 'stripe' | 's3'>, ServerKind> = {
  postgres,
  nats,
  clickhouse,
  zookeeper,
  smtp,
};

export type { ServerHandle } from './launch.js';
export { startPostgres } from './postgres.js';
export { startNats } from './nats.js';
export { startClickhouse } from './clickhouse.js';
