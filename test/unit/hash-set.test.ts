import t from 'tap';
import { HashIndex53, HashSet53 } from '../../services/domain/usage/hash-set.js';
import { recentIdHash } from '../../services/domain/usage/id-hash.js';
import { forAll, type Seeded } from './seeded.js';

/**
 * The identity window's memory (recent-ids.ts) answers "certainly new" from this set: a hash it loses would let a
 * retry count twice, so membership must equal a plain Set's, whatever the hashes and however far the set grew.
 */
const hashOf = (g: Seeded): number => {
  switch (g.int(0, 3)) {
    case 0:
      return g.int(0, 2 ** 21); // small: high word 0
    case 1:
      return Number.MAX_SAFE_INTEGER - g.int(0, 1000); // the top of the range
    case 2:
      return recentIdHash('acct_1', 'mtr_1', `id-${g.int(0, 1e6)}`); // real hashes
    default:
      return g.int(0, 2 ** 26 - 1) * 2 ** 27 + g.int(0, 2 ** 27 - 1);
  }
};

t.test('membership equals a Set’s: adds, repeats, growth far past the first capacity', async (t) => {
  const failures = forAll(
    0x4531,
    40,
    (g) => {
      const hashes = Array.from({ length: g.int(0, 5_000) }, () => hashOf(g));
      // Probes that share a word with an added hash (same low word, another high one; and the reverse) besides
      // random ones: a set comparing one word only would answer them wrongly.
      const shifted = hashes
        .slice(0, 200)
        .flatMap((h) => [(h + 2 ** 32 * g.int(1, 7)) % 2 ** 53, h - (h % 256) + ((h % 256) ^ g.int(1, 255))]);
      return { hashes, probes: [...shifted, ...Array.from({ length: 300 }, () => hashOf(g))], repeats: g.int(0, 2) };
    },
    ({ hashes, probes, repeats }) => {
      const set = new HashSet53();
      const ref = new Set<number>();
      for (let r = 0; r <= repeats; r++)
        for (const h of hashes) {
          set.add(h);
          ref.add(h);
        }
      if (set.size !== ref.size) return `size ${set.size} vs ${ref.size}`;
      for (const h of hashes) if (!set.has(h)) return `lost ${h}`;
      for (const p of probes) if (set.has(p) !== ref.has(p)) return `probe ${p}: ${set.has(p)} vs ${ref.has(p)}`;
      const listed = [...set].sort((x, y) => x - y);
      const want = [...ref].sort((x, y) => x - y);
      if (listed.length !== want.length || listed.some((v, i) => v !== want[i])) return 'iteration differs';
      return null;
    },
  );
  t.same(failures, []);
});

t.test('edge hashes: 0, 2^32 − 1, 2^32, 2^53 − 1, neighbours that share a word', async (t) => {
  const failures = forAll(
    0x4532,
    200,
    (g) => Array.from({ length: g.int(1, 300) }, () => hashOf(g)),
    (hashes) => {
      const set = new HashSet53(1); // the smallest start: these cases grow it too
      const ref = new Set<number>();
      for (const h of hashes) {
        if (set.has(h) !== ref.has(h)) return `before add ${h}: ${set.has(h)} vs ${ref.has(h)}`;
        set.add(h);
        ref.add(h);
      }
      return set.size === ref.size ? null : `size ${set.size} vs ${ref.size}`;
    },
  );
  t.same(failures, []);
  const set = new HashSet53();
  for (const h of [0, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1]) set.add(h);
  t.same(
    [0, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, 1, 2 ** 32 + 1, 2 ** 53 - 2, 2 ** 33, 2 ** 33 - 1].map((h) => set.has(h)),
    [true, true, true, true, false, false, false, false, false],
  );
  t.throws(() => set.add(2 ** 53), RangeError, 'beyond 53 bits: refused, not silently folded');
  t.throws(() => set.add(-1), RangeError);
});

t.test('the index equals a Map: set, setMax, growth, every entry listed once', async (t) => {
  const failures = forAll(
    0x4533,
    40,
    (g) =>
      Array.from({ length: g.int(0, 4_000) }, () => ({ hash: hashOf(g), value: g.int(0, 2 ** 31 - 1), max: g.bool() })),
    (ops) => {
      const index = new HashIndex53(1);
      const ref = new Map<number, number>();
      for (const { hash, value, max } of ops) {
        if (max) {
          index.setMax(hash, value);
          ref.set(hash, Math.max(ref.get(hash) ?? -1, value));
        } else {
          index.set(hash, value);
          ref.set(hash, value);
        }
        // A neighbour sharing the low word: absent unless added.
        const other = (hash + 2 ** 32) % 2 ** 53;
        if (index.get(other) !== (ref.get(other) ?? -1)) return `neighbour ${other}`;
      }
      if (index.size !== ref.size) return `size ${index.size} vs ${ref.size}`;
      for (const [hash, value] of ref) if (index.get(hash) !== value) return `${hash}: ${index.get(hash)} vs ${value}`;
      const listed = new Map<number, number>();
      index.forEach((hash, value) => listed.set(hash, value));
      if (listed.size !== ref.size || [...ref].some(([h, v]) => listed.get(h) !== v)) return 'forEach differs';
      return null;
    },
  );
  t.same(failures, []);
});
