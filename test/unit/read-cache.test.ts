import t from 'tap';
import { pino } from 'pino';
import { Metrics } from '../../shared/metrics.js';
import { ReadCaches, type ReadVersions } from '../../shared/read-cache.js';

// The rules of the api's read caches (shared/read-cache.ts) that the two-process integration test
// (test/integration/read-caches.test.ts) can't time precisely: what a poll clears, what a load racing a change
// may keep, and that nothing is answered from memory once the versions can't be confirmed.

const log = pino({ enabled: false });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Timer-driven, on a machine that may be loaded: waits for the state instead of a fixed time. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (const start = Date.now(); !cond(); await sleep(10))
    if (Date.now() - start > 10_000) throw new Error(`timed out waiting for ${what}`);
}

function harness(opts: { pollMs?: number; maxStalenessMs?: number; maxEntries?: number } = {}) {
  let versions = new Map([
    ['products', '1'],
    ['meters', '1'],
  ]);
  let down = false;
  let polls = 0;
  const caches = new ReadCaches(
    async () => {
      polls++;
      if (down) throw new Error('postgres down');
      return new Map(versions) as ReadVersions;
    },
    { log, metrics: new Metrics('test') },
    { pollMs: 20, maxStalenessMs: 5_000, ...opts },
  );
  let loads = 0;
  const load = (value: string) => async () => {
    loads++;
    return value;
  };
  return {
    caches,
    products: caches.of('products'),
    meters: caches.of('meters'),
    bump: (kind: string) => (versions = new Map(versions).set(kind, String(Number(versions.get(kind) ?? 0) + 1))),
    setDown: (v: boolean) => (down = v),
    loads: () => loads,
    load,
    /** Resolves once a poll that started after the call has ended. */
    nextPolls: async () => {
      const seen = polls;
      await until(() => polls >= seen + 2, 'two more polls');
    },
  };
}

t.test('a hit is answered from memory; a poll that sees a kind move clears that kind only', async (t) => {
  const h = harness();
  await h.caches.start();
  t.teardown(() => h.caches.stop());
  t.equal(await h.products.get('p', h.load('v1')), 'v1');
  t.equal(h.products.get('p', h.load('never')), 'v1', 'the second read is synchronous, from memory');
  t.equal(await h.meters.get('m', h.load('m1')), 'm1');
  h.bump('products');
  await h.nextPolls();
  t.equal(await h.products.get('p', h.load('v2')), 'v2', 'the moved kind was cleared');
  t.equal(h.meters.get('m', h.load('never')), 'm1', 'the other kind kept its entries');
  t.equal(h.loads(), 3);
});

t.test('a load that started before its kind was cleared is answered but not kept', async (t) => {
  const h = harness();
  await h.caches.start();
  t.teardown(() => h.caches.stop());
  let release!: (v: string) => void;
  const slow = h.products.get('p', () => new Promise<string>((r) => (release = r)));
  h.caches.clearAll(); // a write on this process while the old row was being read
  release('old');
  t.equal(await slow, 'old');
  t.equal(await h.products.get('p', h.load('new')), 'new', 'the old answer was not kept');
});

t.test('nothing from memory once the versions are unconfirmed for longer than the bound', async (t) => {
  const h = harness({ maxStalenessMs: 200 });
  await h.caches.start();
  t.teardown(() => h.caches.stop());
  await h.products.get('p', h.load('v1'));
  // (A loaded machine may stall this test past the bound: then the read loads, which the rule also allows.)
  h.setDown(true);
  await until(() => !h.caches.fresh(), 'stale');
  t.equal(await h.products.get('p', h.load('from postgres')), 'from postgres', 'stale: every read loads');
  t.equal(await h.products.get('p', h.load('again')), 'again', 'and keeps nothing meanwhile');
  h.setDown(false);
  await until(() => h.caches.fresh(), 'fresh again');
  t.equal(await h.products.get('p', h.load('v1 reloaded')), 'v1', 'confirmed unchanged: what was kept is current');
  h.setDown(true);
  h.bump('products'); // a change committed while the versions could not be read
  await until(() => !h.caches.fresh(), 'stale');
  h.setDown(false);
  await until(() => h.caches.fresh(), 'fresh again');
  t.equal(await h.products.get('p', h.load('back')), 'back', 'the change seen at the first poll back cleared it');
  t.equal(await h.products.get('p', h.load('never')), 'back', 'confirmed again: from memory');
});

t.test('before the first poll succeeds nothing is kept; a full cache drops its oldest entry', async (t) => {
  const h = harness({ maxEntries: 2 });
  t.equal(await h.products.get('p', h.load('v')), 'v');
  t.equal(await h.products.get('p', h.load('v again')), 'v again', 'not started: no cache');
  await h.caches.start();
  t.teardown(() => h.caches.stop());
  for (const k of ['a', 'b', 'c']) await h.products.get(k, h.load(k));
  t.equal(h.products.size, 2);
  t.equal(await h.products.get('a', h.load('a reloaded')), 'a reloaded', 'the oldest went');
  t.equal(h.products.get('c', h.load('never')), 'c');
});
