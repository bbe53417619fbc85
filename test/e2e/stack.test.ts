import t from 'tap';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackDown, stackStatus, stackUp, type StackInfo } from '../../infra/stack/stack.js';
import { isAlive } from '../../infra/stack/process.js';
import type { TestLike } from '../fixtures/env.js';

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** The first of `count` consecutive free loopback ports (a private stack's METERLINE_STACK_PORT_BASE). */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    let free = true;
    for (let p = base; p < base + count && free; p++) free = await canBind(p);
    if (free) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

/** A stack of its own in a temp dir on free ports (never the shared one), stopped at teardown. */
export async function privateStack(t: TestLike): Promise<{ root: string; env: NodeJS.ProcessEnv; up: StackInfo }> {
  const root = await mkdtemp(join(tmpdir(), 'meterline-stack-'));
  await chmod(root, 0o755); // Postgres runs as the unprivileged postgres user when we are root
  const env: NodeJS.ProcessEnv = { ...process.env, METERLINE_STACK_PORT_BASE: String(await freePortRange(6)) };
  for (const v of ['DATABASE_URL', 'NATS_URL', 'CLICKHOUSE_URL']) delete env[v];
  t.teardown(async () => {
    await stackDown({ root }).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });
  return { root, env, up: await stackUp({ root, env }) };
}

t.test('stack up starts each server on its own ports, reuses them, and down stops exactly its pids', async (t) => {
  const { root, env, up } = await privateStack(t);
  const base = Number(env.METERLINE_STACK_PORT_BASE);
  t.same(
    up.servers.map((s) => [s.name, s.ports]),
    [
      ['postgres', { port: base }],
      ['nats', { client: base + 1, monitor: base + 2 }],
      ['clickhouse', { http: base + 3, tcp: base + 4, interserver: base + 5 }],
    ],
    'ports come from METERLINE_STACK_PORT_BASE',
  );
  t.ok(up.servers.every((s) => s.running && !s.external && s.pid && isAlive(s.pid)), 'every server runs');
  t.match(up.natsUrl, `:${base + 1}`);

  const again = await stackUp({ root, env });
  t.same(again.servers.map((s) => s.pid), up.servers.map((s) => s.pid), 'a second up reuses the running servers');
  const status = await stackStatus({ root, env: { ...env, METERLINE_STACK_PORT_BASE: '' } });
  t.same(status.servers.map((s) => [s.pid, s.running, s.ports]), up.servers.map((s) => [s.pid, true, s.ports]), 'status reads the recorded pids and ports');

  const down = await stackDown({ root });
  t.same(down.stopped.map((s) => s.pid).sort(), up.servers.map((s) => s.pid).sort(), 'down stops exactly the pids it started');
  t.ok(up.servers.every((s) => !isAlive(s.pid!)), 'and they are gone');
  t.same((await stackDown({ root })).stopped, [], 'a second down stops nothing');
});
