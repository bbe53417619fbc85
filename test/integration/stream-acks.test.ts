import t from 'tap';
import { DiscardPolicy, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, nuid } from '@nats-io/transport-node';
import { isolatedConfig, testInfra } from '../fixtures/env.js';
import { AckTimeoutError, NoStreamError, StreamPublisher } from '../../services/ingress/stream-acks.js';

// The ingest hot path's JetStream publish (services/ingress/stream-acks.ts) against a real NATS server: every
// answer JetStream can give maps to the outcome js.publish gives, and answers reach the right publish.
t.test('StreamPublisher: acks, duplicates, errors, no stream and timeouts as js.publish reports them', async (t) => {
  const config = await isolatedConfig(t);
  const infra = await testInfra(t, config);
  const names = infra.natsNames;
  const acks = new StreamPublisher(infra.nats, 2_000);
  t.teardown(() => acks.close());
  const withId = (id: string) => {
    const h = natsHeaders();
    h.set('Nats-Msg-Id', id);
    return h;
  };
  const subject = names.usageSubject('acct_acks');

  const first = await acks.publish(subject, Buffer.from('a'), withId('m-1'));
  t.match(first, { stream: names.usageStream, duplicate: false }, 'stored: the PubAck of the stream');
  t.ok(first.seq > 0);
  const again = await acks.publish(subject, Buffer.from('a'), withId('m-1'));
  t.same(again, { ...first, duplicate: true }, 'the same msg id again: a duplicate of the same sequence');

  // Many at once: each publish gets its own message's answer.
  const many = await Promise.all(
    Array.from({ length: 200 }, (_, i) => acks.publish(subject, Buffer.from(String(i)), withId(`many-${i}`))),
  );
  t.equal(new Set(many.map((a) => a.seq)).size, 200, '200 publishes, 200 distinct sequences');
  t.ok(many.every((a) => !a.duplicate));
  const jsm = await jetstreamManager(infra.nats);
  const stored = await Promise.all(
    [5, 150].map((i) => jsm.streams.getMessage(names.usageStream, { seq: many[i]!.seq })),
  );
  t.same(
    stored.map((m) => m!.string()),
    ['5', '150'],
    'the sequence answered to a publish holds that publish',
  );

  // JetStream refuses (a full stream with discard new): its error, as JetStreamApiError.
  const capStream = `${names.usageStream}_ACKS_CAP`;
  const capSubject = `${names.namespace}.ackscap.x`;
  await jsm.streams.add({ name: capStream, subjects: [capSubject], max_msgs: 1, discard: DiscardPolicy.New });
  t.teardown(() => jsm.streams.delete(capStream).catch(() => undefined));
  await acks.publish(capSubject, Buffer.from('1'), withId('cap-1'));
  const full = await acks.publish(capSubject, Buffer.from('2'), withId('cap-2')).catch((e: unknown) => e);
  t.type(full, JetStreamApiError, 'a refusal is a JetStreamApiError');
  t.match((full as Error).message, /maximum messages/);

  // Nothing listens on the subject: NATS's no-responders status.
  const none = await acks.publish(`nostream.${nuid.next()}`, Buffer.from('x'), withId('n-1')).catch((e: unknown) => e);
  t.type(none, NoStreamError, 'no stream on the subject: NoStreamError');

  // A responder that never answers: a timeout, after which a late answer is ignored.
  const silent = `silent.${nuid.next()}`;
  const held: string[] = [];
  const sub = infra.nats.subscribe(silent, { callback: (_e, m) => void held.push(m.reply!) });
  t.teardown(() => sub.unsubscribe());
  const quick = new StreamPublisher(infra.nats, 150);
  t.teardown(() => quick.close());
  const late = await quick.publish(silent, Buffer.from('x'), withId('s-1')).catch((e: unknown) => e);
  t.type(late, AckTimeoutError, 'no answer in time: AckTimeoutError');
  t.equal(held.length, 1, 'the message was sent');
  infra.nats.publish(held[0]!, JSON.stringify({ stream: 'X', seq: 1 }));
  const next = quick.publish(silent, Buffer.from('y'), withId('s-2'));
  infra.nats.publish(held[0]!, JSON.stringify({ stream: 'X', seq: 2 })); // late again: not this publish's answer
  await t.rejects(next, AckTimeoutError, 'a late answer to an expired publish resolves no other publish');
});
