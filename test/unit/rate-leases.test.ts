import t from 'tap';
import type { KV } from '@nats-io/kv';
import {
  grantFrom,
  refilled,
  RateLeases,
  type BucketShape,
  type LeaseRequest,
} from '../../shared/limits/rate-leases.js';
import { AccountRateLimiter } from '../../shared/limits/rate-limiter.js';

const shape = { capacity: 1_000, perMs: 1 }; // 1,000 per second

t.test('a shared bucket refills at the limit’s rate up to one window’s worth', async (t) => {
  t.equal(refilled(undefined, shape, 5), 1_000, 'no entry: full (it expired long after refilling)');
  t.equal(refilled({ t: 100, at: 0 }, shape, 200), 300);
  t.equal(refilled({ t: 100, at: 0 }, shape, 10_000), 1_000, 'never above capacity');
  t.equal(refilled({ t: -500, at: 0 }, shape, 200), -300, 'a debt is paid back by the refill');
  t.equal(refilled({ t: 100, at: 500 }, shape, 0), 100, 'a clock behind the last writer refills nothing');
});

t.test('a lease takes what is needed plus what it asks ahead, never from a bucket short of the need', async (t) => {
  t.equal(grantFrom(1_000, { need: 100, take: 100, extra: 50 }), 150);
  t.equal(grantFrom(120, { need: 100, take: 100, extra: 50 }), 120, 'ahead only from what is there');
  t.equal(grantFrom(99, { need: 100, take: 100, extra: 50 }), 0, 'short of the need: nothing taken');
  t.equal(
    grantFrom(1_000, { need: 1_000, take: 1_500, extra: 50 }),
    1_500,
    'a request above the whole bucket passes when it is full, leaving it in debt',
  );
  t.equal(grantFrom(999, { need: 1_000, take: 1_500, extra: 0 }), 0, '… and only then');
});

t.test('over any interval, leases never hand out more than the limit plus one window', async (t) => {
  // Many processes leasing greedily from one bucket for 10 s (clock in ms): what they get in total.
  let state: { t: number; at: number } | undefined;
  let handedOut = 0;
  for (let now = 0; now <= 10_000; now += 7) {
    const available = refilled(state, shape, now);
    const granted = grantFrom(available, { need: 1, take: 1, extra: 250 });
    if (granted > 0) state = { t: available - granted, at: now };
    handedOut += granted;
  }
  t.ok(handedOut <= 1_000 * 10 + 1_000, `${handedOut} ≤ 10 s × 1,000/s + 1,000`);
  t.ok(handedOut >= 1_000 * 10, 'and the whole rate is usable');
});

/**
 * The shared buckets in memory: RateLeases's rules (refilled, grantFrom) without NATS. `net.delayMs`: how late
 * each answer arrives (decided when asked); `net.reachable`: what the connection reports meanwhile.
 */
function memoryLeases(
  net: { delayMs: number; reachable: boolean; leases?: number } = { delayMs: 0, reachable: true },
): RateLeases {
  const states = new Map<string, { t: number; at: number }>();
  const late = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), net.delayMs));
  const modify = (key: string, shape: BucketShape, change: (available: number) => number) => {
    const now = Date.now();
    const available = refilled(states.get(key), shape, now);
    const granted = change(available);
    if (granted !== 0) states.set(key, { t: available - granted, at: now });
    return { granted, left: available - granted, at: now };
  };
  return {
    get reachable() {
      return net.reachable;
    },
    lease: async (key: string, shape: BucketShape, r: LeaseRequest) => {
      net.leases = (net.leases ?? 0) + 1;
      return late(modify(key, shape, (a) => grantFrom(a, r)));
    },
    forget: () => undefined,
  } as unknown as RateLeases;
}

t.test('a lowered limit holds at once: tokens leased under the old one are not spent', async (t) => {
  const limiter = new AccountRateLimiter(memoryLeases());
  t.teardown(() => limiter.stop());
  // Busy under a high limit: the process leases ahead (up to a quarter of a window).
  for (let i = 0; i < 50; i++) await limiter.take('acct_1', 'attributed', 100, 200_000);
  await limiter.take('acct_1', 'attributed', 100, 20); // a full bucket of the new limit: passes once, in debt
  await t.rejects(
    Promise.resolve().then(() => limiter.take('acct_1', 'attributed', 100, 20)),
    { code: 'rate_limited' },
    'the next request is refused under the new limit of 20 per second',
  );
});

t.test(
  'a slow lease over a live connection is waited for; with NATS disconnected the process goes alone',
  async (t) => {
    const net = { delayMs: 0, reachable: true };
    const leases = memoryLeases(net);
    const first = new AccountRateLimiter(leases);
    const second = new AccountRateLimiter(leases);
    t.teardown(async () => {
      await first.stop();
      await second.stop();
    });
    await first.take('acct_1', 'ingest', 1_000, 1_000); // the whole bucket, spent by another process
    net.delayMs = 2_500; // answers slower than LEASE_TIMEOUT_MS: a loaded machine
    await t.rejects(
      Promise.resolve().then(() => second.take('acct_1', 'ingest', 500, 1_000)),
      { code: 'rate_limited' },
      'the slow answer (an empty bucket) is what counts: no bucket of its own on top of the shared one',
    );
    net.reachable = false; // the connection to NATS is down: after LEASE_TIMEOUT_MS, its own share of the limit
    const alone = await second.take('acct_2', 'ingest', 500, 1_000);
    t.match(alone.limitHeader(), /^"ingest";r=500;/, 'admitted from its own bucket (its share: the whole limit)');
  },
);

t.test(
  'takeEach: each account against its own limit, answered at once while this process holds the tokens',
  async (t) => {
    const limiter = new AccountRateLimiter(memoryLeases());
    t.teardown(() => limiter.stop());
    const limits: Record<string, number> = { acct_quiet: 1_000, acct_noisy: 10 };
    const records = (counts: Record<string, number>) =>
      Object.entries(counts).flatMap(([account, n]) => Array<string>(n).fill(account));
    const first = await limiter.takeEach('ingest', records({ acct_quiet: 5, acct_noisy: 10 }), (a) => limits[a]!);
    t.same([...first.keys()], [], 'both within their limits (the first take of each leases)');
    // Interleaved, as an operator's batch lists its customers' records: each account's records are counted together.
    const second = limiter.takeEach(
      'ingest',
      ['acct_quiet', 'acct_noisy', 'acct_quiet', ...records({ acct_quiet: 3 })],
      (a) => limits[a]!,
    );
    const refused = second instanceof Map ? second : await second;
    t.same([...refused.keys()], ['acct_noisy'], 'the noisy account alone is refused');
    t.equal(refused.get('acct_noisy')?.status, 429);
    const third = limiter.takeEach('ingest', records({ acct_quiet: 5 }), (a) => limits[a]!);
    t.ok(third instanceof Map, 'tokens leased ahead: no promise, no lease');
    t.equal((third as Map<string, unknown>).size, 0);
  },
);

t.test(
  'takeEach with registry slots: a slot finds the bucket of its account, never of another (a slot reused)',
  async (t) => {
    const limiter = new AccountRateLimiter(undefined);
    t.teardown(() => limiter.stop());
    const limits: Record<string, number> = { acct_a: 10, acct_b: 1_000, acct_c: 1_000 };
    const limitOf = (a: string) => limits[a]!;
    const take = (accounts: string[], slots: number[]) => limiter.takeEach('ingest', accounts, limitOf, slots);
    // acct_a in slot 3, counted with and without its slot: one bucket (10 per second, 8 + 2 = the limit).
    t.equal((take(Array<string>(8).fill('acct_a'), Array<number>(8).fill(3)) as Map<string, unknown>).size, 0);
    t.equal((limiter.takeEach('ingest', ['acct_a', 'acct_a'], limitOf) as Map<string, unknown>).size, 0);
    t.same([...(take(['acct_a'], [3]) as Map<string, unknown>).keys()], ['acct_a'], 'its one bucket is empty');
    // Slot 3 released and given to acct_b: acct_b's own bucket, not acct_a's empty one; acct_a (now slot 7) still empty.
    t.equal((take(['acct_b', 'acct_b'], [3, 3]) as Map<string, unknown>).size, 0, 'acct_b: its own bucket');
    t.same([...(take(['acct_a', 'acct_c'], [7, -1]) as Map<string, unknown>).keys()], ['acct_a']);
    t.same([...(take(['acct_a'], [3]) as Map<string, unknown>).keys()], ['acct_a'], 'acct_a named by a stale slot');
  },
);

/**
 * A NATS KV entry's compare-and-set rules in memory (create fails on an existing key, update on a stale
 * revision), counting requests: what RateLeases asks of NATS.
 */
function memoryKv() {
  const entries = new Map<string, { revision: number; value: string }>();
  let seq = 0;
  const asked = { get: 0, create: 0, update: 0 };
  const conflict = () => Object.assign(new Error('wrong last sequence'), { code: 10071 });
  const kv = {
    get: async (key: string) => {
      asked.get++;
      const e = entries.get(key);
      return e && { revision: e.revision, operation: 'PUT', string: () => e.value };
    },
    create: async (key: string, value: string) => {
      asked.create++;
      if (entries.has(key)) throw conflict();
      entries.set(key, { revision: ++seq, value });
      return seq;
    },
    update: async (key: string, value: string, revision: number) => {
      asked.update++;
      if (entries.get(key)?.revision !== revision) throw conflict();
      entries.set(key, { revision: ++seq, value });
      return seq;
    },
  };
  return { kv: kv as unknown as KV, asked, entries };
}

t.test(
  'a lease writes on top of the entry this process last wrote: one request, a read only after a conflict',
  async (t) => {
    const { kv, asked, entries } = memoryKv();
    const one = new RateLeases(kv);
    const other = new RateLeases(kv);
    const lease = { need: 100, take: 100, extra: 0 };
    t.equal((await one.lease('ingest.acct_1', shape, lease)).granted, 100);
    t.same(asked, { get: 0, create: 1, update: 0 }, 'a bucket never seen: one conditional create');
    t.equal((await one.lease('ingest.acct_1', shape, lease)).granted, 100);
    t.same(asked, { get: 0, create: 1, update: 1 }, 'the next: one update, no read');
    t.equal((await other.lease('ingest.acct_1', shape, lease)).granted, 100, 'another process');
    t.same(asked, { get: 1, create: 2, update: 2 }, '… whose create lost, read and updated');
    const r = await one.lease('ingest.acct_1', shape, lease);
    t.equal(r.granted, 100);
    t.ok(r.left <= 700 && r.left > 600, `every lease came out of the one bucket (${r.left} left of 1,000)`);
    t.same(asked, { get: 2, create: 2, update: 4 }, 'its stale update lost: read again, then written');
    t.equal(JSON.parse(entries.get('ingest.acct_1')!.value).t, r.left, 'the entry holds what the lease left');
    const before = { ...asked };
    const refused = await one.lease('ingest.acct_1', shape, { need: 5_000, take: 5_000, extra: 0 });
    t.equal(refused.granted, 0, 'more than the bucket can hold: refused');
    t.same(asked, before, '… from the entry it knows, with no request (tokens only ever leave a bucket)');
  },
);

t.test('idle for a second, a process keeps only the least lease ahead (a twentieth of the limit)', async (t) => {
  const net = { delayMs: 0, reachable: true, leases: 0 };
  const limiter = new AccountRateLimiter(memoryLeases(net));
  t.teardown(() => limiter.stop());
  // A busy moment: the process leases further ahead than a twentieth (about 250 ms of its rate).
  const busy = async (account: string) => {
    for (let i = 0; i < 5; i++) await limiter.take(account, 'ingest', 1_000, 10_000);
  };
  await busy('acct_1');
  let leased = net.leases;
  t.notOk(limiter.take('acct_1', 'ingest', 600, 10_000) instanceof Promise, 'busy: more than a twentieth held');
  t.equal(net.leases, leased);
  await busy('acct_2');
  await new Promise((r) => setTimeout(r, 1_600));
  leased = net.leases;
  const taken = limiter.take('acct_2', 'ingest', 500, 10_000);
  t.notOk(taken instanceof Promise, 'idle, a twentieth of the limit (500) is still held: spent with no lease');
  t.equal(net.leases, leased);
  await limiter.take('acct_2', 'ingest', 1, 10_000);
  t.equal(net.leases, leased + 1, 'what it had leased beyond that was dropped: the next record leases');
});
