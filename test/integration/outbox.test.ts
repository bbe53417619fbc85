import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { isolatedConfig, testInfra, waitUntil, freePort, type TestLike } from '../fixtures/env.js';
import { createTestAccount } from '../fixtures/auth.js';
import { startNats } from '../../infra/stack/servers.js';
import { withTransaction } from '../../shared/clients/postgres.js';
import { appendEvent, type NewEvent } from '../../services/domain/events/outbox-store.js';
import type { EventType } from '../../shared/vocabulary.js';
import {
  createOutboxRelay,
  type OutboxRelay,
  type OutboxRelayOptions,
} from '../../services/roles/dispatcher/outbox-relay.js';
import { createDispatcherService } from '../../services/roles/dispatcher/service.js';
import type { Infra } from '../../shared/infra.js';

interface StreamMsg {
  subject: string;
  msgId: string | undefined;
  payload: any;
}

/** Everything on the EVENTS stream, in stream order, read with an ordered JetStream consumer. */
async function readEvents(infra: Infra): Promise<StreamMsg[]> {
  const jsm = await jetstreamManager(infra.nats);
  const total = (await jsm.streams.info(infra.natsNames.eventsStream)).state.messages;
  if (total === 0) return [];
  const consumer = await jetstream(infra.nats).consumers.get(infra.natsNames.eventsStream);
  const out: StreamMsg[] = [];
  while (out.length < total) {
    const batch = await consumer.fetch({ max_messages: total - out.length, expires: 2_000 });
    for await (const m of batch)
      out.push({ subject: m.subject, msgId: m.headers?.get('Nats-Msg-Id'), payload: m.json() });
  }
  return out;
}

async function emit(infra: Infra, accountId: string, type: EventType, data: Record<string, unknown>): Promise<string> {
  return withTransaction(infra.pg, (c) => appendEvent(c, { accountId, type, data } as NewEvent));
}

async function publishedAt(infra: Infra, id: string): Promise<Date | null> {
  const r = await infra.pg.query<{ published_at: Date | null }>(
    'SELECT published_at FROM outbox_events WHERE id = $1',
    [id],
  );
  return r.rows[0]?.published_at ?? null;
}

function startRelay(t: TestLike, infra: Infra, opts?: OutboxRelayOptions): Promise<OutboxRelay> {
  const relay = createOutboxRelay(infra, opts);
  t.teardown(() => relay.stop());
  return relay.start().then(() => relay);
}

async function metric(infra: Infra, name: string): Promise<number> {
  const m = infra.metrics.registry.getSingleMetric(name);
  if (!m) return 0;
  return (await m.get()).values.reduce((s, v) => s + v.value, 0);
}

t.test('outbox relay', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config, 'dispatcher');
  const account = await createTestAccount(infra);
  const acct = account.accountId;

  t.test('committed events reach EVENTS once each, in order; a rolled-back change emits nothing', async (t) => {
    const relay = await startRelay(t, infra);
    const first = await emit(infra, acct, 'invoice.created', { invoice_id: 'inv_1', amount: 12.3, currency: 'USD' });
    let rolledBack = '';
    await t.rejects(
      withTransaction(infra.pg, async (c) => {
        rolledBack = await appendEvent(c, {
          accountId: acct,
          type: 'invoice.paid',
          data: {
            invoice_id: 'inv_1',
            amount: 12.3,
            currency: 'USD',
            status: 'paid',
            previous_attributes: { status: 'open' },
          },
        });
        throw new Error('the change failed after the event was appended');
      }),
      /the change failed/,
    );
    const sentinel = await emit(infra, acct, 'subscription.updated', {
      subscription_id: 'sub_1',
      status: 'active',
      items: [],
    });
    await waitUntil(async () => (await publishedAt(infra, sentinel)) !== null, 'the sentinel event to be published');
    t.ok(await publishedAt(infra, first), 'first marked published');
    t.equal(
      (await infra.pg.query('SELECT 1 FROM outbox_events WHERE id = $1', [rolledBack])).rowCount,
      0,
      'no outbox row for the rollback',
    );

    const msgs = await readEvents(infra);
    t.same(
      msgs.map((m) => m.payload.id),
      [first, sentinel],
      'exactly the committed events, in commit order',
    );
    const row = (await infra.pg.query('SELECT created_at FROM outbox_events WHERE id = $1', [first])).rows[0];
    t.same(msgs[0], {
      subject: infra.natsNames.eventSubject('invoice.created'),
      msgId: first,
      payload: {
        id: first,
        type: 'invoice.created',
        // The customer is added to every event's data (docs/design.md §9).
        data: { invoice_id: 'inv_1', amount: 12.3, currency: 'USD', customer_id: account.customerId },
        created_at: row.created_at.toISOString(),
        account_id: acct,
      },
    });
    t.match(msgs[0]!.payload.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    t.equal(msgs[1]!.subject, infra.natsNames.eventSubject('subscription.updated'));
    t.same(await relay.health(), { ok: true });
    await relay.stop();
  });

  t.test('batches keep seq order across many events', async (t) => {
    const before = (await readEvents(infra)).length;
    const ids: string[] = [];
    for (let i = 0; i < 25; i++)
      ids.push(await emit(infra, acct, 'invoice.created', { invoice_id: `inv_b${i}`, amount: i, currency: 'EUR' }));
    const relay = await startRelay(t, infra, { batchSize: 7 });
    await waitUntil(async () => (await publishedAt(infra, ids[24]!)) !== null, 'all 25 to be published');
    const msgs = (await readEvents(infra)).slice(before);
    t.same(
      msgs.map((m) => m.payload.id),
      ids,
    );
    await relay.stop();
  });

  t.test('NOTIFY wakes the relay long before the next poll', async (t) => {
    const relay = await startRelay(t, infra, { pollIntervalMs: 60_000 });
    await waitUntil(
      async () => (await infra.pg.query('SELECT 1 FROM outbox_events WHERE published_at IS NULL')).rowCount === 0,
      'an empty outbox',
    );
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const id = await emit(infra, acct, 'payment.failed', {
        invoice_id: `inv_n${i}`,
        amount: 5,
        currency: 'USD',
        payment_method_id: null,
        failure_code: 'insufficient_funds',
        attempt_count: 1,
      });
      await waitUntil(async () => (await publishedAt(infra, id)) !== null, 'the event to be published', 30_000, 5);
      latencies.push(Date.now() - started);
    }
    t.ok(Math.max(...latencies) < 1_000, `commit → published in ${latencies.join(', ')} ms with a 60 s poll`);
    t.comment(`NOTIFY-driven relay latency (commit → marked published), ms: ${latencies.join(', ')}`);
    await relay.stop();
  });

  t.test('without LISTEN the poll still relays within its interval', async (t) => {
    const relay = await startRelay(t, infra, { listen: false, pollIntervalMs: 200 });
    const id = await emit(infra, acct, 'invoice.paid', { invoice_id: 'inv_p', amount: 1, currency: 'USD' });
    await waitUntil(async () => (await publishedAt(infra, id)) !== null, 'the polled event to be published', 30_000);
    t.pass('published by the poll');
    await relay.stop();
  });

  t.test('a relay that died after publishing but before marking does not duplicate the event', async (t) => {
    const id = await emit(infra, acct, 'invoice.paid', { invoice_id: 'inv_crash', amount: 2, currency: 'USD' });
    // What the dead relay managed: the publish, not the UPDATE.
    const row = (
      await infra.pg.query('SELECT id, account_id, type, data, created_at FROM outbox_events WHERE id = $1', [id])
    ).rows[0];
    const { eventPayload } = await import('../../services/roles/dispatcher/outbox-relay.js');
    await jetstream(infra.nats).publish(
      infra.natsNames.eventSubject('invoice.paid'),
      JSON.stringify(eventPayload(row)),
      { msgID: id },
    );
    const dupBefore = await metric(infra, 'meterline_outbox_duplicates_total');
    const relay = await startRelay(t, infra);
    await waitUntil(async () => (await publishedAt(infra, id)) !== null, 'the event to be marked');
    const copies = (await readEvents(infra)).filter((m) => m.payload.id === id);
    t.equal(copies.length, 1, 'one copy on the stream');
    t.equal(
      (await metric(infra, 'meterline_outbox_duplicates_total')) - dupBefore,
      1,
      'JetStream reported the re-publish as a duplicate',
    );
    await relay.stop();
  });

  t.test('two relays share the outbox (SKIP LOCKED): every event published once, none twice', async (t) => {
    const before = (await readEvents(infra)).length;
    const publishedBefore = await metric(infra, 'meterline_outbox_published_total');
    const dupBefore = await metric(infra, 'meterline_outbox_duplicates_total');
    const r1 = await startRelay(t, infra, { batchSize: 5, pollIntervalMs: 100 });
    const r2 = await startRelay(t, infra, { batchSize: 5, pollIntervalMs: 100 });
    const ids = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        emit(infra, acct, 'invoice.created', { invoice_id: `inv_c${i}`, amount: i, currency: 'USD' }),
      ),
    );
    await waitUntil(
      async () => (await infra.pg.query('SELECT 1 FROM outbox_events WHERE published_at IS NULL')).rowCount === 0,
      'all events to be published',
    );
    const msgs = (await readEvents(infra)).slice(before);
    t.equal(msgs.length, 120);
    t.same(msgs.map((m) => m.payload.id).sort(), [...ids].sort());
    t.equal(
      (await metric(infra, 'meterline_outbox_published_total')) - publishedBefore,
      120,
      'no event was published by both relays',
    );
    t.equal((await metric(infra, 'meterline_outbox_duplicates_total')) - dupBefore, 0);
    await Promise.all([r1.stop(), r2.stop()]);
  });

  t.test('stopped relay publishes nothing; events wait in the outbox for the next start', async (t) => {
    const relay = await startRelay(t, infra, { pollIntervalMs: 100 });
    await relay.stop();
    const id = await emit(infra, acct, 'invoice.created', { invoice_id: 'inv_s', amount: 3, currency: 'USD' });
    const count = (await readEvents(infra)).length;
    // Stopped means stopped: a notification and two poll periods later nothing moved.
    await new Promise((r) => setTimeout(r, 300));
    t.equal(await publishedAt(infra, id), null);
    t.equal((await readEvents(infra)).length, count);
    const again = await startRelay(t, infra);
    await waitUntil(async () => (await publishedAt(infra, id)) !== null, 'the waiting event to be published at start');
    await again.stop();
  });

  t.test('the dispatcher role runs the relay and reports it in health', async (t) => {
    const relay = createOutboxRelay(infra);
    const service = createDispatcherService(infra, [relay]);
    await service.start();
    t.teardown(() => service.stop());
    const id = await emit(infra, acct, 'invoice.paid', { invoice_id: 'inv_role', amount: 4, currency: 'USD' });
    await waitUntil(async () => (await publishedAt(infra, id)) !== null, 'the role to publish');
    const health = await service.health();
    t.same(health.checks['outbox-relay'], { ok: true });
    await service.stop();
  });
});

// Fault injection on a private NATS server so the shared stack is never touched.
t.test(
  'NATS down: nothing is marked published, health says why; after NATS returns each event lands once',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'meterline-outbox-nats-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const port = await freePort();
    let nats = await startNats({ dir, port });
    t.teardown(() => nats.stop());
    const config = await isolatedConfig(t, { NATS_URL: nats.url });
    const infra = await testInfra(t, config, 'dispatcher');
    const account = await createTestAccount(infra);
    const relay = await startRelay(t, infra, { pollIntervalMs: 200, publishTimeoutMs: 500 });

    const early = await emit(infra, account.accountId, 'invoice.created', {
      invoice_id: 'inv_e',
      amount: 1,
      currency: 'USD',
    });
    await waitUntil(async () => (await publishedAt(infra, early)) !== null, 'the event before the outage');

    await nats.stop();
    const during = await emit(infra, account.accountId, 'invoice.paid', {
      invoice_id: 'inv_d',
      amount: 1,
      currency: 'USD',
    });
    await waitUntil(async () => !(await relay.health()).ok, 'health to report the failed relay');
    t.match((await relay.health()).detail, /relay failed/);
    t.equal(await publishedAt(infra, during), null, 'not marked while NATS is down');

    nats = await startNats({ dir, port });
    await waitUntil(
      async () => (await publishedAt(infra, during)) !== null,
      'the event to be published after NATS returns',
      30_000,
    );
    await waitUntil(async () => (await relay.health()).ok, 'health to recover');
    const ids = (await readEvents(infra)).map((m) => m.payload.id);
    t.same(ids, [early, during], 'each event exactly once');
  },
);
