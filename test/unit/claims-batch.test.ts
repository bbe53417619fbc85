import t from 'tap';
import { ASSIGNED, batchRows, rowsIfAllAssigned } from '../../services/domain/usage/batch-rows.js';
import {
  claimOf,
  claimsOfPayload,
  identityKey,
  keepUnclaimed,
  type Claim,
} from '../../services/domain/usage/claims.js';
import { recentIdHash } from '../../services/domain/usage/id-hash.js';
import { RecentIds } from '../../services/domain/usage/recent-ids.js';
import { tsvEscape } from '../../shared/usage/wire.js';
import { forAll, type Seeded } from './seeded.js';

/**
 * The consumer's identity decision (services/domain/usage/claims.ts, batch-rows.ts, recent-ids.ts) reads rows as
 * typed arrays with one hash each, compares identities only on equal hashes and copies claim lines from the
 * payload. Whatever those shortcuts, it must decide exactly as the rule written plainly here (strings, Map, Set):
 * a record counted twice or a retry let in is a billing error.
 */
const HOUR = 3_600_000;
const WINDOW = 24 * HOUR;
const NOW = 1_764_400_000_000;

interface Row {
  account: string;
  meter: string;
  id: string;
  ts: number;
  received: number;
  value: number;
}

const IDS = ['a', 'b', 'tab\there', 'back\\slash', 'new\nline', 'cr\rx', '\\t', 'é', '日本語', '😀x', '\\', 'a\\tb'];

function idOf(g: Seeded): string {
  if (g.bool(0.08)) return `use_${'x'.repeat(21)}${g.int(0, 9)}`; // server-assigned
  if (g.bool(0.7)) return g.pick(IDS);
  return `id-${g.int(0, 30)}`;
}

function rowOf(g: Seeded): Row {
  const received = NOW - g.pick([0, g.int(0, 3_600_000), 23 * HOUR, 25 * HOUR, g.int(0, 30 * HOUR)]);
  return {
    // Names that start like one another: a run of rows ends where the bytes differ, tab included.
    account: g.pick(['acct_1', 'acct_2', 'acct_3', 'acct_12']),
    meter: g.pick(['mtr_a', 'mtr_b', 'mtr_ab']),
    id: idOf(g),
    ts: g.pick([1_000, 2_000, received - g.int(0, 5_000)]),
    received,
    value: g.int(1, 9),
  };
}

/** A payload as the ingress writes it (shared/usage/wire.ts): tsv2, or tsv1 without the dimension columns. */
const payload = (rows: Row[], v1: boolean) =>
  Buffer.from(
    rows
      .map(
        (r) =>
          `${r.account}\t${r.meter}\t${r.ts}\t${tsvEscape(r.id)}\t${r.value}\t${r.received}${v1 ? '' : '\t[]\t[]'}\n`,
      )
      .join(''),
  );

interface Case {
  chunks: Row[][];
  v1: boolean[];
  stored: (Claim & { account: string; meter: string; id: string })[];
  collide: number;
}

function caseOf(g: Seeded): Case {
  const chunks = Array.from({ length: g.int(1, 4) }, () => Array.from({ length: g.int(0, 25) }, () => rowOf(g)));
  const all = chunks.flat();
  const stored = Array.from({ length: g.int(0, 12) }, () => {
    const r = all.length && g.bool(0.8) ? g.pick(all) : rowOf(g);
    const ts = g.bool(0.5) ? r.ts : r.ts + g.int(1, 9_000);
    return { account: r.account, meter: r.meter, id: r.id, ts, claimed: r.received - g.int(-2 * HOUR, 26 * HOUR) };
  });
  // 0: the real hash; else hashes folded into a few values: different identities share hashes.
  return { chunks, v1: chunks.map(() => g.bool(0.2)), stored, collide: g.pick([0, 0, 1, 3]) };
}

/** The rule, plainly: first occurrence in the batch, then the stored claims of the identity. */
function reference(c: Case, stored: Case['stored']) {
  const seen = new Set<string>();
  const kept: string[] = [];
  const claims: string[] = [];
  let dropped = 0;
  c.chunks.forEach((rows, n) => {
    const keep: Row[] = [];
    for (const r of rows) {
      if (r.id.startsWith('use_') && r.id.length === 26) {
        keep.push(r);
        continue;
      }
      const k = `${r.account}|${r.meter}|${r.id}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const mine = stored.filter((s) => s.account === r.account && s.meter === r.meter && s.id === r.id);
      if (mine.some((s) => s.ts === r.ts)) keep.push(r);
      else if (!mine.some((s) => Math.abs(s.claimed - r.received) < WINDOW)) {
        keep.push(r);
        claims.push(claimOf(r));
      }
    }
    dropped += rows.length - keep.length;
    if (keep.length || !rows.length) kept.push(payload(keep, c.v1[n]!).toString()); // an empty payload stays as it was
  });
  return { kept, claims: claims.join(''), dropped };
}

/** What claimedIdentities answers for the identities looked up. */
function lookupOf(stored: Case['stored'], identities: { account: string; meter: string; id: string }[]) {
  const wanted = new Set(identities.map((x) => identityKey(x.account, x.meter, x.id)));
  const out = new Map<string, Claim[]>();
  for (const s of stored) {
    const k = identityKey(s.account, s.meter, s.id);
    if (wanted.has(k)) out.set(k, [...(out.get(k) ?? []), { ts: s.ts, claimed: s.claimed }]);
  }
  return out;
}

const fold = (collide: number) => (collide ? (h: number) => h % (collide + 1) : undefined);

t.test('every row looked up: the decision equals the plain rule, with hashes forced equal too', async (t) => {
  const failures = forAll(0x4545, 300, caseOf, (c) => {
    const chunks = c.chunks.map((rows, n) => payload(rows, c.v1[n]!));
    const rows = batchRows(chunks, fold(c.collide));
    const all = c.chunks.flat();
    const lookup = all.flatMap((r, i) => (r.id.startsWith('use_') && r.id.length === 26 ? [] : [i]));
    const b = keepUnclaimed(
      rows,
      lookup,
      lookupOf(
        c.stored,
        lookup.map((i) => all[i]!),
      ),
      WINDOW,
    );
    const want = reference(c, c.stored);
    const got = b.chunks.map((x) => Buffer.from(x).toString());
    if (JSON.stringify(got) !== JSON.stringify(want.kept)) return `kept ${JSON.stringify(got)}`;
    if (b.dropped !== want.dropped || b.kept + b.dropped !== all.length) return `counts ${b.kept}/${b.dropped}`;
    if (b.claims.toString() !== want.claims) return `claims ${JSON.stringify(b.claims.toString())}`;
    return null;
  });
  t.same(failures, []);
});

t.test(
  'a payload row hashes as its identity’s strings (escapes, unicode): the filter loads what it checks',
  async (t) => {
    const failures = forAll(0x4546, 200, caseOf, (c) => {
      const all = c.chunks.flat();
      const rows = batchRows(c.chunks.map((r, n) => payload(r, c.v1[n]!)));
      if (rows.count !== all.length) return `${rows.count} rows read`;
      for (const [i, r] of all.entries())
        if (rows.hash[i] !== recentIdHash(r.account, r.meter, r.id)) return `row ${i} hashes differently`;
      return null;
    });
    t.same(failures, []);
    t.not(recentIdHash('a', 'bc', 'd'), recentIdHash('ab', 'c', 'd'), 'parts are separated');
    t.equal(recentIdHash('a', 'm', '\ud800'), recentIdHash('a', 'm', '\ufffd'), 'a lone surrogate as UTF-8 writes it');
  },
);

t.test(
  'with the memory of recent ids: two batches in a row decide as the plain rule over every stored claim',
  async (t) => {
    const failures = forAll(0x4547, 200, caseOf, (c) => {
      const floor = NOW - WINDOW - HOUR;
      // The memory holds every claim accepted since its floor; older ones are only in the table.
      const stored = c.stored.map((s) => ({ ...s }));
      const ids = new RecentIds(WINDOW);
      for (const account of ['acct_1', 'acct_2', 'acct_12'])
        ids.load(
          account,
          floor,
          stored.filter((s) => s.account === account && s.claimed >= floor),
        );
      for (const [step, chunkRows] of [c.chunks, [...c.chunks].reverse()].entries()) {
        const all = chunkRows.flat();
        const v1 = step ? [...c.v1].reverse() : c.v1;
        const rows = batchRows(chunkRows.map((r, n) => payload(r, v1[n]!)));
        const lookup: number[] = [];
        for (const [i, r] of all.entries())
          if (!(r.id.startsWith('use_') && r.id.length === 26) && ids.mayHave(r.account, rows.hash[i]!, r.received))
            lookup.push(i);
        const b = keepUnclaimed(
          rows,
          lookup,
          lookupOf(
            stored,
            lookup.map((i) => all[i]!),
          ),
          WINDOW,
        );
        const want = reference({ ...c, chunks: chunkRows, v1 }, stored);
        const got = b.chunks.map((x) => Buffer.from(x).toString());
        if (JSON.stringify(got) !== JSON.stringify(want.kept)) return `step ${step} kept ${JSON.stringify(got)}`;
        // A claim older than the memory's floor under the row's own timestamp is not in memory: the row is claimed
        // again (an extra claim line, harmless: its record counts once either way). Otherwise the claims are equal.
        if (stored.every((s) => s.claimed >= floor) && b.claims.toString() !== want.claims)
          return `step ${step} claims ${JSON.stringify(b.claims.toString())}`;
        for (const i of b.claimed) stored.push({ ...all[i]!, claimed: all[i]!.received });
        ids.add(rows, b.claimed, NOW);
      }
      return null;
    });
    t.same(failures, []);
  },
);

t.test('the memory across hours: after pruning, "certainly new" still means no claim within the window', async (t) => {
  const failures = forAll(
    0x4548,
    60,
    (g) => ({
      // Claims accepted over 40 hours, some identities claimed in several hours.
      claims: Array.from({ length: g.int(0, 300) }, () => ({
        meter: 'mtr_a',
        id: `id-${g.int(0, 60)}`,
        claimed: NOW - g.int(0, 40 * HOUR),
      })),
      probes: Array.from({ length: 200 }, () => ({ id: `id-${g.int(0, 80)}`, received: NOW + g.int(-3 * HOUR, HOUR) })),
      later: g.int(0, 20 * HOUR),
    }),
    ({ claims, probes, later }) => {
      const ids = new RecentIds(WINDOW);
      ids.load('acct_1', NOW - 40 * HOUR, claims);
      const now = NOW + later;
      ids.add(batchRows([]), [], now); // prunes at `now`
      for (const p of probes) {
        const within = claims.some((c) => c.id === p.id && Math.abs(c.claimed - p.received) < WINDOW);
        if (within && !ids.mayHave('acct_1', recentIdHash('acct_1', 'mtr_a', p.id), p.received))
          return `${p.id} accepted at ${p.received} answered new, pruned at ${now}`;
      }
      // What pruning keeps: the ids claimed within the window and margin stay held.
      for (const c of claims)
        if (c.claimed >= now - WINDOW && !ids.mayHave('acct_1', recentIdHash('acct_1', 'mtr_a', c.id), now))
          return `${c.id} claimed at ${c.claimed} forgotten`;
      return null;
    },
  );
  t.same(failures, []);
});

t.test(
  "a correction's replacement rows: every row claimed at the correction's time, as claimOf writes it",
  async (t) => {
    const failures = forAll(0x4546, 200, caseOf, (c) => {
      const rows = c.chunks[0]!;
      const at = NOW + 17;
      const got = claimsOfPayload(payload(rows, c.v1[0]!), at).toString();
      const want = rows.map((r) => claimOf(r, at)).join('');
      return got === want ? null : `claims ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
    });
    t.same(failures, []);
  },
);

t.test('a batch with no client id is known without parsing it: rowsIfAllAssigned against the plain rule', async (t) => {
  // Mostly server-assigned ids, so whole batches of them are common, and ids that only look like one.
  const nearly = ['use_' + 'x'.repeat(21), 'use_' + 'x'.repeat(23), 'usf_' + 'x'.repeat(22), 'use_' + 'é'.repeat(22)];
  const rowsCase = (g: Seeded) => {
    const c = caseOf(g);
    for (const rows of c.chunks)
      for (const r of rows)
        r.id = g.bool(0.97) ? `use_${'y'.repeat(21)}${g.int(0, 9)}` : g.bool(0.5) ? g.pick(nearly) : r.id;
    return c;
  };
  const outcomes = { live: 0, claiming: 0 };
  const failures = forAll(0x4548, 400, rowsCase, (c) => {
    const chunks = c.chunks.map((rows, n) => payload(rows, c.v1[n]!));
    const all = c.chunks.flat();
    const plain = all.every((r) => r.id.startsWith('use_') && Buffer.byteLength(r.id) === 26) ? all.length : undefined;
    const parsed = batchRows(chunks);
    const byParser = parsed.flags.every((f) => (f & ASSIGNED) !== 0) ? parsed.count : undefined;
    const got = rowsIfAllAssigned(chunks);
    outcomes[got === undefined ? 'claiming' : 'live']++;
    return got === plain && got === byParser ? null : `got ${got}, plain ${plain}, parser ${byParser}`;
  });
  t.same(failures, []);
  t.ok(outcomes.live > 50 && outcomes.claiming > 50, `both answers tried: ${JSON.stringify(outcomes)}`);
});

t.test(
  'fresh rows (what a message’s partial counts): server-assigned, claimed now, or claimed before by this same message under the same timestamp',
  async (t) => {
    const failures = forAll(0x4549, 300, caseOf, (c) => {
      const keys = c.chunks.map((_, n) => n + 1);
      // Some stored claims were made by one of these messages (a redelivery), some by others (0: unknown, 9: another).
      const g = c.stored.map((s, n) => ({ ...s, batch: [0, 9, 1, 2, 3, 4][n % 6]! }));
      const chunks = c.chunks.map((rows, n) => payload(rows, c.v1[n]!));
      const rows = batchRows(chunks);
      const all = c.chunks.flat();
      const lookup = all.flatMap((r, i) => (r.id.startsWith('use_') && r.id.length === 26 ? [] : [i]));
      const wanted = new Set(lookup.map((i) => identityKey(all[i]!.account, all[i]!.meter, all[i]!.id)));
      const claimed = new Map<string, Claim[]>();
      for (const s of g) {
        const k = identityKey(s.account, s.meter, s.id);
        if (wanted.has(k))
          claimed.set(k, [...(claimed.get(k) ?? []), { ts: s.ts, claimed: s.claimed, batch: s.batch }]);
      }
      const b = keepUnclaimed(rows, lookup, claimed, WINDOW, keys);
      // The rule, plainly.
      const seen = new Set<string>();
      const want: number[] = [];
      let i = 0;
      c.chunks.forEach((chunkRows, n) => {
        for (const r of chunkRows) {
          const row = i++;
          if (r.id.startsWith('use_') && r.id.length === 26) {
            want.push(row);
            continue;
          }
          const k = `${r.account}|${r.meter}|${r.id}`;
          if (seen.has(k)) continue;
          seen.add(k);
          const mine = g.filter((s) => s.account === r.account && s.meter === r.meter && s.id === r.id);
          if (mine.some((s) => s.ts === r.ts)) {
            if (mine.some((s) => s.ts === r.ts && s.batch === keys[n])) want.push(row);
          } else if (!mine.some((s) => Math.abs(s.claimed - r.received) < WINDOW)) want.push(row);
        }
      });
      const got = [...(b.fresh ?? [])].flatMap((f, n) => (f ? [n] : []));
      if (JSON.stringify(got) !== JSON.stringify(want))
        return `fresh ${JSON.stringify(got)} want ${JSON.stringify(want)}`;
      // Each claim line names its message.
      for (const text of b.claims.toString().split('\n').filter(Boolean)) {
        const batch = Number(text.split('\t').at(-1));
        if (!keys.includes(batch)) return `claim of batch ${batch}`;
      }
      return null;
    });
    t.same(failures, []);
  },
);
