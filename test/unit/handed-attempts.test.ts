import t from 'tap';
import { HandedAttempts } from '../../services/roles/dispatcher/handed-attempts.js';
import type { ClaimedAttempt } from '../../services/domain/webhooks/delivery-store.js';

/**
 * First attempts the fan-out leases to its own sender (services/roles/dispatcher/handed-attempts.ts). What a user
 * relies on: none is sent twice (one whose lease could run out before it is sent is given up, never sent late), a
 * slow webhook cannot fill the queue, and the sender's per-webhook concurrency holds for handed attempts too.
 */
const attempt = (id: string, webhook: string): ClaimedAttempt => ({
  id,
  webhook_id: webhook,
  account_id: 'acct_1',
  event_id: `evt_${id}`,
  event_type: 'invoice.paid',
  attempt: 1,
  url: 'http://127.0.0.1:1/',
  webhook_status: 'enabled',
  secret_sealed: 's',
  previous_secret_sealed: null,
  previous_secret_expires_at: null,
  event: { data: {}, created_at: new Date(0) },
});
const ids = (as: ClaimedAttempt[]) => as.map((a) => a.id);
const unlimited = () => Number.POSITIVE_INFINITY;

t.test('plan: bounded overall and per webhook, counting what is held and what this plan took', async (t) => {
  const q = new HandedAttempts({ max: 5, maxPerWebhook: 2, minLeaseLeftMs: 1_000 });
  t.same(q.plan(['a', 'a', 'a', 'b']), [true, true, false, true], 'the third of webhook a does not fit');
  q.add([attempt('1', 'a'), attempt('2', 'a'), attempt('3', 'b')].map((a) => ({ attempt: a, leaseEndsAt: 60_000 })));
  t.same(q.plan(['a', 'b', 'c', 'c', 'd']), [false, true, true, false, false], 'two places left: b and one c');
  q.take(10, unlimited, 0);
  t.equal(q.size, 0);
  t.same(q.plan(['a', 'a', 'a']), [true, true, false], 'places come back once sent');
});

t.test('take: oldest first, up to the limit and each webhook’s free concurrency', async (t) => {
  const q = new HandedAttempts({ max: 100, maxPerWebhook: 100, minLeaseLeftMs: 1_000 });
  const held = [attempt('1', 'a'), attempt('2', 'a'), attempt('3', 'b'), attempt('4', 'a'), attempt('5', 'b')];
  q.add(held.map((a) => ({ attempt: a, leaseEndsAt: 60_000 })));
  const first = q.take(3, (w) => (w === 'a' ? 1 : 5), 0);
  t.same(ids(first.send), ['1', '3', '5'], 'one of a (its free place), both of b');
  t.same(first.expired, []);
  t.equal(q.size, 2);
  const second = q.take(10, unlimited, 0);
  t.same(ids(second.send), ['2', '4'], 'the rest, in order');
  t.equal(q.take(10, unlimited, 0).send.length, 0, 'nothing is handed out twice');
});

t.test('an attempt whose lease is too short to send it is given up, never sent', async (t) => {
  const q = new HandedAttempts({ max: 100, maxPerWebhook: 100, minLeaseLeftMs: 25_000 });
  q.add([
    { attempt: attempt('old', 'a'), leaseEndsAt: 30_000 },
    { attempt: attempt('new', 'a'), leaseEndsAt: 60_000 },
  ]);
  const r = q.take(10, unlimited, 10_000);
  t.same(ids(r.send), ['new'], '35 s … 50 s of lease left: the newer one is sent');
  t.same(ids(r.expired), ['old'], '20 s left < 25 s: given up to a claim after its lease');
  t.same(q.plan(['a']), [true], 'its place is free again');
});

t.test('drain: what a stopping dispatcher gives back', async (t) => {
  const q = new HandedAttempts({ max: 10, maxPerWebhook: 10, minLeaseLeftMs: 0 });
  q.add([attempt('1', 'a'), attempt('2', 'b')].map((a) => ({ attempt: a, leaseEndsAt: 60_000 })));
  t.same(ids(q.drain()), ['1', '2']);
  t.equal(q.size, 0);
  t.same(q.plan(['a', 'a']), [true, true]);
});
