import t from 'tap';
import { stackDown, stackStatus, stackUp } from '../../infra/stack/stack.js';
import { isAlive } from '../../infra/stack/process.js';
import { privateStack } from '../fixtures/stack.js';

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
  t.ok(up.servers.every((s) => s.running && s.secured && !s.external && s.pid && isAlive(s.pid)), 'every server runs, secured');
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
