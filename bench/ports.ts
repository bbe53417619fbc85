/**
 * Ports for the benchmark's own servers (api, ceiling, private NATS and ClickHouse). With
 * METERLINE_STACK_PORT_BASE=N (several people or agents sharing a machine, each with a range of ports), they are
 * taken from N+500…N+999 — above the stack's own ports, inside the range — so a run stays out of everyone else's;
 * without it, any free port.
 */
import net from 'node:net';
import { freePort } from '../infra/stack/process.js';
import { PORT_BASE_VARIABLE } from '../infra/stack/topology.js';

let next = 500;

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });

export async function benchPort(): Promise<number> {
  const base = Number(process.env[PORT_BASE_VARIABLE] ?? '');
  if (!Number.isInteger(base) || base <= 0) return freePort();
  while (next < 1000) {
    const port = base + next++;
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port left in ${base + 500}–${base + 999}`);
}
