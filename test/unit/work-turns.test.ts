import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { WorkTurns } from '../../shared/http/work-turns.js';

/** Busy for `ms` of wall time: a body's parse and handler, as the event loop sees them. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** A connected loopback pair: what arrives on `server` is read in the event loop's poll, as a request is. */
async function socketPair(t: Test): Promise<{ client: Socket; server: Socket }> {
  const listener = createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const accepted = once(listener, 'connection');
  const client = connect((listener.address() as AddressInfo).port, '127.0.0.1');
  const [server] = (await accepted) as [Socket];
  t.teardown(() => {
    client.destroy();
    server.destroy();
    listener.close();
  });
  return { client, server };
}

t.test('tasks run in the order they came, each once', async (t) => {
  const turns = new WorkTurns(1);
  const ran: number[] = [];
  const all = Array.from(
    { length: 200 },
    (_, i) => new Promise<void>((done) => turns.run(() => (ran.push(i), done()))),
  );
  t.equal(ran.length, 0, 'nothing runs in the read that queued it');
  await Promise.all(all);
  t.same(
    ran,
    Array.from({ length: 200 }, (_, i) => i),
  );
  t.equal(turns.waiting, 0);
});

/**
 * Queues 40 tasks of 1 ms each (`later`: the millisecond comes after an await, as a handler's work after a rate
 * take does), then writes to a socket: how many of them had finished when the event loop read it.
 */
async function tasksBeforeARead(t: Test, later: boolean): Promise<number> {
  const { client, server } = await socketPair(t);
  const turns = new WorkTurns(2);
  let finished = 0;
  const work = (done: () => void) => {
    busy(1);
    finished++;
    done();
  };
  const all = Array.from(
    { length: 40 },
    () =>
      new Promise<void>((done) =>
        turns.run(() => (later ? void Promise.resolve().then(() => work(done)) : work(done))),
      ),
  );
  const readAfter = once(server, 'data').then(() => finished);
  client.write('GET /v1/entitlements/check');
  const before = await readAfter;
  await Promise.all(all);
  return before;
}

t.test('a task that throws does not stop the tasks after it', async (t) => {
  const turns = new WorkTurns(1);
  const ran: string[] = [];
  turns.run(() => {
    throw new Error('a handler bug');
  });
  await new Promise<void>((done) => turns.run(() => (ran.push('after'), done())));
  t.same(ran, ['after']);
  t.equal(turns.waiting, 0);
});

t.test('a socket read waits for about one turn, not for every task queued before it', async (t) => {
  // A request without a body arrives while 40 ms of bodies wait: it is read after a turn or two.
  const before = await tasksBeforeARead(t, false);
  t.ok(before < 40, `the read ran after ${before} of 40 tasks`);
  t.ok(before <= 10, 'within a few turns of 2 ms');
});

t.test("a task's awaited continuation counts in its turn", async (t) => {
  const before = await tasksBeforeARead(t, true);
  t.ok(before < 40, `the read ran after ${before} of 40 continuations`);
  t.ok(before <= 10, 'within a few turns of 2 ms');
});
