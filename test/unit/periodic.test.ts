import t from 'tap';
import { pino } from 'pino';
import { PeriodicTask } from '../../shared/periodic.js';
import { currentAuditSetting, withAuditActor } from '../../shared/audit/actor.js';
import { DeliveryPump } from '../../services/roles/dispatcher/delivery-pump.js';

// The one tick loop (shared/periodic.ts) and the one delivery pump (services/roles/dispatcher/delivery-pump.ts):
// what the settler, the sweeper, the heartbeat and the dispatcher's queues rely on.

const log = pino({ enabled: false });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a gap task waits its interval after each run ended, never runs twice at once, and stops', async (t) => {
  const starts: number[] = [];
  const ends: number[] = [];
  let running = 0;
  let overlapped = false;
  const task = new PeriodicTask({
    name: 'slow',
    everyMs: 30,
    gap: true,
    log,
    run: async () => {
      if (running++) overlapped = true;
      starts.push(Date.now());
      await sleep(60); // longer than the interval
      ends.push(Date.now());
      running--;
    },
  });
  await task.start();
  // Until it has run three times (a loaded machine delays timers: a deadline, not a fixed sleep).
  for (const deadline = Date.now() + 10_000; starts.length < 3 && Date.now() < deadline; ) await sleep(10);
  await task.stop();
  const runs = starts.length;
  await sleep(120);
  t.ok(runs >= 3, `it ran again and again (${runs} runs)`);
  t.notOk(overlapped, 'never two runs at once');
  for (let i = 1; i < starts.length; i++)
    t.ok(starts[i]! - ends[i - 1]! >= 25, `run ${i + 1} started ${starts[i]! - ends[i - 1]!} ms after run ${i} ended`);
  t.equal(starts.length, runs, 'nothing runs after stop()');
});

t.test('a failure is a problem only once it has lasted; a success clears it', async (t) => {
  let fail = true;
  const failed: string[] = [];
  const task = new PeriodicTask({
    name: 'flaky',
    everyMs: 60_000,
    log,
    run: async () => {
      if (fail) throw new Error('ClickHouse is down');
    },
    failed: (err) => failed.push((err as Error).message),
  });
  await task.runNow();
  const now = Date.now();
  t.same(failed, ['ClickHouse is down'], 'the failure went to `failed`');
  t.equal(task.problem(60_000, now), undefined, 'not yet a problem');
  t.equal(task.problem(60_000, now + 61_000), 'ClickHouse is down', 'a problem after a minute of failures');
  fail = false;
  await task.runNow();
  t.equal(task.problem(60_000, now + 61_000), undefined, 'a success clears it');
  await task.stop();
});

t.test('the delivery pump: wakes coalesce into one more pass, a failed pass is its health until cleared', async (t) => {
  let passes = 0;
  let release: () => void = () => undefined;
  let failNext = false;
  const pump = new DeliveryPump({
    name: 'test delivery',
    failure: 'claiming due things failed',
    pollIntervalMs: 60_000,
    log,
    pass: async () => {
      passes++;
      if (failNext) {
        failNext = false;
        throw new Error('Postgres is down');
      }
      await new Promise<void>((r) => (release = r));
      pump.clear();
    },
  });
  pump.wake();
  t.equal(passes, 0, 'nothing runs before start()');
  pump.start();
  t.equal(passes, 1, 'start() runs a first pass');
  pump.wake();
  pump.wake();
  pump.wake();
  release();
  await sleep(10);
  t.equal(passes, 2, 'three wakes during a pass: one more pass after it');
  release();
  await sleep(10);
  t.equal(passes, 2, 'then it waits');
  failNext = true;
  pump.wake();
  await sleep(10);
  t.same(
    pump.health(),
    { ok: false, detail: 'claiming due things failed: Postgres is down' },
    'a failed pass is named',
  );
  pump.wake();
  await sleep(10);
  release();
  await sleep(10);
  t.same(pump.health(), { ok: true }, 'the next good pass clears it');
  t.equal(await pump.stop(), true, 'stop() stops a running pump');
  t.ok(pump.isStopped);
  pump.wake();
  t.equal(passes, 4, 'a stopped pump starts no pass');
  t.equal(await pump.stop(), false, 'a second stop() does nothing');
});

t.test('a task started during a write request runs as no one (its changes are not that request’s)', async (t) => {
  const seen: string[] = [];
  const task = new PeriodicTask({
    name: 'probe',
    everyMs: 10,
    run: async () => {
      seen.push(currentAuditSetting());
    },
  });
  await withAuditActor({ type: 'token', user_id: 'usr_1', operation: 'POST /v1/things' }, async () => {
    t.not(currentAuditSetting(), '', 'the request has an actor');
    await task.start();
    await task.runNow();
  });
  await task.stop();
  t.ok(seen.length >= 2);
  t.same(new Set(seen), new Set(['']), 'every run without the actor');
});
