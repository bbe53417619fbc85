/**
 * Which server instances a stack runs, each with its own directory and ports. The single topology is
 * one instance of each server, named after it, under `.data/<server>/`, on the ports in the README —
 * or, with METERLINE_STACK_PORT_BASE=N, on N, N+1, … (in SERVER_NAMES order, each server's ports in
 * its `defaultPorts` order), so a second stack can run beside the first. A cluster topology is a
 * longer list of instances (several of a kind, each with its ports) built the same way.
 */
import path from 'node:path';
import { SERVER_NAMES, StackError } from './errors.js';
import type { Ports, ServerKind } from './launch.js';
import { SERVERS } from './servers.js';
import { stackDataDir } from './state.js';

export const PORT_BASE_VARIABLE = 'METERLINE_STACK_PORT_BASE';

export interface Instance {
  /** Unique in the stack: the server's name in the single topology. */
  name: string;
  kind: ServerKind;
  dir: string;
  ports: Ports;
  url: string;
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

export function singleTopology(root: string, env: NodeJS.ProcessEnv): Instance[] {
  const kinds = SERVER_NAMES.map((n) => SERVERS[n]);
  const count = kinds.reduce((sum, k) => sum + Object.keys(k.defaultPorts).length, 0);
  const ports = assignPorts(kinds, portBase(env, count));
  return kinds.map((kind, i) => ({
    name: kind.name,
    kind,
    dir: path.join(stackDataDir(root), kind.name),
    ports: ports[i]!,
    url: kind.url(ports[i]!),
  }));
}
