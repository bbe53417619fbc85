import t from 'tap';
import { stackDown, stackStatus, stackUp } from '../../infra/stack/stack.js';
import { isAlive } from '../../infra/stack/process.js';
import { createServer } from 'node:net';
import { portIsFree, privateStack, privateStackRoot } from '../fixtures/stack.js';

t.test('stack up starts each server on its own ports, reuses them, and down stops exactly its pids', async (t) => {
  const { root, env, up } = await privateStack(t);
  const base = Number(env.METERLINE_STACK_PORT_BASE);
  t.same(
    up.servers.map((s) => [s.name, s.ports]),
    [
      ['postgres', { port: base }],
      ['nats', { client: base + 1, monitor: base + 2 }],
      ['clickhouse', { http: base + 3, tcp: base + 4, interserver: base + 5 }],
      ['smtp', { smtp: base + 6 }],
    ],
    'ports come from METERLINE_STACK_PORT_BASE',
  );
  t.ok(
    up.servers.every((s) => s.running && s.secured && !s.external && s.pid && isAlive(s.pid)),
    'every server runs, secured',
  );
  t.match(up.natsUrl, `:${base + 1}`);

  const again = await stackUp({ root, env });
  t.same(
    again.servers.map((s) => s.pid),
    up.servers.map((s) => s.pid),
    'a second up reuses the running servers',
  );
  const status = await stackStatus({ root, env: { ...env, METERLINE_STACK_PORT_BASE: '' } });
  t.same(
    status.servers.map((s) => [s.pid, s.running, s.ports]),
    up.servers.map((s) => [s.pid, true, s.ports]),
    'status reads the recorded pids and ports',
  );

  const down = await stackDown({ root });
  t.same(
    down.stopped.map((s) => s.pid).sort(),
    up.servers.map((s) => s.pid).sort(),
    'down stops exactly the pids it started',
  );
  t.ok(
    up.servers.every((s) => !isAlive(s.pid!)),
    'and they are gone',
  );
  t.same((await stackDown({ root })).stopped, [], 'a second down stops nothing');
});

t.test('a server that cannot start: up fails naming it and stops the servers it had started', async (t) => {
  const { root, env } = await privateStackRoot(t);
  const base = Number(env.METERLINE_STACK_PORT_BASE);
  // Something else holds ClickHouse's HTTP port (as a leftover server from an earlier run would).
  const squatter = createServer();
  await new Promise<void>((resolve) =>
    squatter.listen({ port: base + 3, host: '127.0.0.1', exclusive: true }, resolve),
  );
  await t.rejects(
    stackUp({ root, env }),
    new RegExp(`clickhouse: HTTP port ${base + 3} .*already in use`),
    'up fails and names the server and port',
  );
  t.same(
    (await stackStatus({ root, env })).servers.map((s) => [s.name, s.pid]),
    [
      ['postgres', null],
      ['nats', null],
      ['clickhouse', null],
      ['smtp', null],
    ],
    'nothing is left recorded as running',
  );
  t.ok(await portIsFree(base), "Postgres's port is free again");
  t.ok(await portIsFree(base + 1), "NATS's client port is free again");
  t.ok(await portIsFree(base + 6), "the SMTP server's port is free again");
  await new Promise<void>((resolve) => squatter.close(() => resolve()));

  const up = await stackUp({ root, env });
  t.ok(
    up.servers.every((s) => s.running),
    'once the port is free, up starts every server',
  );
  await stackDown({ root });
});
