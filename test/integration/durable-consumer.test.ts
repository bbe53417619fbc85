import t from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { nuid } from '@nats-io/transport-node';
import { isolatedConfig, testInfra } from '../fixtures/env.js';
import {
  ensureDurableConsumer,
  isTransientJetStreamError,
  retryTransient,
} from '../../shared/clients/durable-consumer.js';

// A role's durable consumer set up at start (shared/clients/durable-consumer.ts), against a real NATS server:
// processes starting at once all succeed on one consumer, a changed setting is applied, what fails for now is
// retried and what fails for good is not.
t.test('ensureDurableConsumer: concurrent starts, updates, transient and lasting failures', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const names = infra.natsNames;
  const nc = infra.nats;
  const jsm = await jetstreamManager(nc);
  const stream = `${names.usageStream}_DURABLE`;
  await jsm.streams.add({ name: stream, subjects: [`${names.namespace}.durable.>`] });
  t.teardown(() => jsm.streams.delete(stream).catch(() => undefined));
  const durable = { durable_name: 'setup', ack_wait: 30_000_000_000, max_ack_pending: 100 };

  // Eight processes' starts at once on a stream with no consumer yet: each may find none and add it.
  const starts = await Promise.allSettled(
    Array.from({ length: 8 }, () => ensureDurableConsumer(nc, stream, durable, () => undefined)),
  );
  t.same(
    starts.map((s) => s.status),
    Array(8).fill('fulfilled'),
    'every concurrent start succeeds',
  );
  const consumers = [];
  for await (const c of jsm.consumers.list(stream)) consumers.push(c);
  t.same(
    consumers.map((c) => [c.name, c.config.max_ack_pending]),
    [['setup', 100]],
    'one consumer, as configured',
  );

  // A start with another setting changes the existing consumer.
  await ensureDurableConsumer(nc, stream, { ...durable, max_ack_pending: 250 }, (existing) =>
    existing.config.max_ack_pending !== 250 ? { max_ack_pending: 250 } : undefined,
  );
  t.equal((await jsm.consumers.info(stream, 'setup')).config.max_ack_pending, 250, 'the changed setting applied');

  // A lasting failure (no such stream) is thrown at once, not retried until the deadline.
  const t0 = Date.now();
  const missing = await ensureDurableConsumer(nc, `${stream}_MISSING`, durable, undefined, 20_000).catch((e) => e);
  t.type(missing, Error, 'a missing stream fails the setup');
  t.notOk(isTransientJetStreamError(missing), 'as a lasting failure');
  t.ok(Date.now() - t0 < 5_000, 'without waiting for the deadline');

  // What fails for now is retried: requests to a subject nobody answers yet (NATS's no-responders and timeouts, as
  // the client reports them), until a responder appears.
  const subject = `${names.namespace}.late.${nuid.next()}`;
  const failures: unknown[] = [];
  const answered = retryTransient(async () => {
    try {
      return (await nc.request(subject, 'ping', { timeout: 200 })).string();
    } catch (err) {
      failures.push(err);
      throw err;
    }
  }, 20_000);
  await new Promise((r) => setTimeout(r, 800));
  const sub = nc.subscribe(subject, {
    callback: (_e, m) => {
      m.respond('pong');
    },
  });
  t.teardown(() => sub.unsubscribe());
  t.equal(await answered, 'pong', 'answered once a responder is there');
  t.ok(failures.length >= 2, 'after failing for now');
  t.ok(failures.every(isTransientJetStreamError), 'each failure taken as transient');

  // …and gives up at its deadline.
  const never = await retryTransient(() => nc.request(`${subject}.never`, 'x', { timeout: 100 }), 600).catch((e) => e);
  t.ok(isTransientJetStreamError(never), 'past the deadline the transient failure is thrown');
});
