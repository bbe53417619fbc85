import t from 'tap';
import { readPlan } from '../../services/domain/usage/query.js';
import {
  RAW_MINUTE,
  withoutMinutes,
  withoutPartials,
  type PendingMinute,
} from '../../services/domain/usage/read-plan.js';
import {
  isMarkedPerMinute,
  isMarkedPerSecond,
  isMinuteSettled,
  isSecondSettled,
  hasPartials,
  isReadFromPartials,
  isSettled,
  markOf,
  sliceOf,
  statesOf,
  WHOLE_HOUR,
} from '../../services/domain/usage/hour-marks.js';
import {
  scanAttributedRows,
  scanRows,
  type TouchedByAccount,
  type TouchedHours,
} from '../../services/domain/usage/row-scan.js';
import { readMessageRows } from '../../services/domain/usage/message-rows.js';
import { encodeRow } from '../../shared/usage/wire.js';
import { HOUR_MS } from '../../services/domain/usage/rollups-store.js';
import { ReadCoalescer } from '../../services/domain/usage/coalesce.js';

const H = HOUR_MS;

t.test('readPlan: whole swept hours from rollups, edges and unswept hours raw', async (t) => {
  t.same(
    readPlan(10 * H, 20 * H, undefined),
    { rollupHours: [], rawRanges: [[10 * H, 20 * H]] },
    'before the first sweep: all raw',
  );
  t.same(readPlan(10 * H, 20 * H, 30), { rollupHours: [[10, 20]], rawRanges: [] }, 'all swept: all rollups');
  t.same(
    readPlan(10 * H, 20 * H, 14),
    { rollupHours: [[10, 15]], rawRanges: [[15 * H, 20 * H]] },
    'the unswept tail raw',
  );
  t.same(
    readPlan(10 * H + 5, 20 * H - 7, 30),
    {
      rollupHours: [[11, 19]],
      rawRanges: [
        [10 * H + 5, 11 * H],
        [19 * H, 20 * H - 7],
      ],
    },
    'partial edge hours raw (a period ending mid-hour)',
  );
  t.same(
    readPlan(10 * H + 5, 10 * H + 9, 30),
    { rollupHours: [], rawRanges: [[10 * H + 5, 10 * H + 9]] },
    'inside one hour: raw',
  );
  t.same(
    readPlan(10 * H, 20 * H, 5),
    { rollupHours: [], rawRanges: [[10 * H, 20 * H]] },
    'nothing swept in range: raw',
  );
});

t.test('readPlan: hours with late records pending are raw, settled hours come from rollups swept or not', async (t) => {
  const hours = { pending: new Set([12, 13, 17]), settled: new Set([16, 18, 19]) };
  t.same(
    readPlan(10 * H, 20 * H, 15, hours),
    {
      rollupHours: [
        [10, 12],
        [14, 17],
        [18, 20],
      ],
      rawRanges: [
        [12 * H, 14 * H],
        [17 * H, 18 * H],
      ],
    },
    'pending hours raw whatever the sweep says; settled hours after the watermark (the quiet current hour) from rollups',
  );
  t.same(
    readPlan(10 * H, 20 * H, undefined, { pending: new Set(), settled: new Set([19]) }),
    { rollupHours: [[19, 20]], rawRanges: [[10 * H, 19 * H]] },
    'before any sweep only settled hours come from rollups',
  );
});

t.test('readPlan: a pending hour marked per minute reads its settled minutes from minute rollups', async (t) => {
  const M = 60_000;
  const hours = {
    pending: new Set([12, 13]),
    settled: new Set<number>(),
    perMinute: new Map([
      [
        13,
        new Map<number, PendingMinute>([
          [13 * 60 + 58, RAW_MINUTE],
          [13 * 60 + 59, RAW_MINUTE],
        ]),
      ],
    ]),
  };
  t.same(
    readPlan(12 * H, 14 * H, 11, hours),
    {
      rollupHours: [],
      rollupMinutes: [[13 * 60, 13 * 60 + 58]],
      rawRanges: [
        [12 * H, 13 * H],
        [13 * H + 58 * M, 14 * H],
      ],
    },
    'hour 12 (marked whole) raw; hour 13 per minute: its two busy minutes raw',
  );
  t.same(
    withoutMinutes(readPlan(12 * H, 14 * H, 11, hours)),
    { rollupHours: [], rawRanges: [[12 * H, 14 * H]] },
    'without minute rollups (unique counts): raw',
  );
  const s = (minutes: [number, number, number][], whole = 0, settled = 0) => ({
    accountId: 'a',
    meterId: 'm',
    hour: 13,
    touched: whole + minutes.reduce((n, [, t]) => n + t, 0),
    records: 0,
    wholeHourTouched: whole,
    settledTouched: settled,
    settledRecords: 0,
    partialMarks: 0,
    minutes: new Map(
      minutes.map(([m, touched, settledTouched]) => [
        m,
        { touched, settledTouched, minuteMarks: touched, seconds: new Map() },
      ]),
    ),
  });
  t.ok(isMarkedPerMinute(s([[780, 2, 1]])), 'only minute marks: per minute');
  t.notOk(isMarkedPerMinute(s([[780, 2, 1]], 1)), 'a whole-hour mark (a late record, a correction): not per minute');
  t.notOk(isSettled(s([[780, 2, 1]], 0, 1)), 'an hour settle of fewer marks than made: pending');
  t.ok(isSettled(s([[780, 2, 1]], 0, 2)), '… of all of them: settled');
});

t.test('readPlan: a busy minute of a pending hour reads its settled seconds from second rollups', async (t) => {
  const hour = 13;
  const busy = hour * 60 + 59;
  const hours = {
    pending: new Set([hour]),
    settled: new Set<number>(),
    perMinute: new Map([[hour, new Map<number, PendingMinute>([[busy, new Set([busy * 60 + 58, busy * 60 + 59])]])]]),
  };
  t.same(
    readPlan(hour * H, (hour + 1) * H, 12, hours),
    {
      rollupHours: [],
      rollupMinutes: [[hour * 60, busy]],
      rollupSeconds: [[busy * 60, busy * 60 + 58]],
      rawRanges: [[(busy * 60 + 58) * 1000, (hour + 1) * H]],
    },
    'settled minutes per minute, the busy minute per second, its last two seconds raw',
  );
  t.same(
    withoutMinutes(readPlan(hour * H, (hour + 1) * H, 12, hours)),
    { rollupHours: [], rawRanges: [[hour * H, (hour + 1) * H]] },
    'without minute and second rollups (unique counts): raw',
  );
});

t.test('readPlan: of an hour marked per second only, unmarked minutes and seconds are read from nowhere', async (t) => {
  const hour = 13;
  const quiet = hour * 60 + 10; // marked and settled: from minute rollups
  const busy = hour * 60 + 59;
  const settledSecond = busy * 60 + 3; // marked and settled: from second rollups
  const hours = {
    pending: new Set([hour]),
    settled: new Set<number>(),
    perMinute: new Map([[hour, new Map<number, PendingMinute>([[busy, new Set([busy * 60 + 58, busy * 60 + 59])]])]]),
    marked: new Map([[hour, new Set([quiet, busy, settledSecond, busy * 60 + 58, busy * 60 + 59])]]),
  };
  t.same(
    readPlan(hour * H, (hour + 1) * H, 12, hours),
    {
      rollupHours: [],
      rollupMinutes: [[quiet, quiet + 1]],
      rollupSeconds: [[settledSecond, settledSecond + 1]],
      rawRanges: [[(busy * 60 + 58) * 1000, (hour + 1) * H]],
    },
    'only the marked minute and second from rollups; the busy seconds raw; the rest (no record) not read',
  );
  t.same(
    readPlan(hour * H, (hour + 1) * H, 12, { ...hours, marked: new Map([[hour, new Set([busy])]]) }),
    { rollupHours: [], rawRanges: [[(busy * 60 + 58) * 1000, (hour + 1) * H]] },
    'a hot meter with nothing settled: its busy seconds raw and no rollup part at all',
  );
  t.same(
    readPlan(hour * H, (hour + 1) * H, 12, { ...hours, marked: new Map() }).rollupSeconds,
    [[busy * 60, busy * 60 + 58]],
    'an hour left out of `marked` (a whole-hour or minute mark somewhere): every other second from rollups, as before',
  );
});

t.test('readPlan: pending seconds whose every mark wrote partials are read from them, the others raw', async (t) => {
  const hour = 13;
  const busy = hour * 60 + 59;
  const [s57, s58, s59] = [busy * 60 + 57, busy * 60 + 58, busy * 60 + 59];
  const hours = {
    pending: new Set([hour]),
    settled: new Set<number>(),
    perMinute: new Map([[hour, new Map<number, PendingMinute>([[busy, new Set([s57, s58, s59])]])]]),
    marked: new Map([[hour, new Set([busy, s57, s58, s59])]]),
    partialSeconds: new Set([s57, s59]),
  };
  const plan = readPlan(hour * H, (hour + 1) * H, 12, hours);
  t.same(
    plan,
    {
      rollupHours: [],
      partialSeconds: [
        [s57, s58],
        [s59, s59 + 1],
      ],
      rawRanges: [[s58 * 1000, s59 * 1000]],
    },
    'seconds 57 and 59 from partials, 58 (an insert without partials marked it) raw',
  );
  t.same(
    withoutPartials(plan),
    { rollupHours: [], rawRanges: [[s57 * 1000, (hour + 1) * H]] },
    'a read partials cannot answer (percentiles, a corrected meter): all three raw, joined',
  );
  t.same(withoutMinutes(plan), withoutPartials(plan), 'unique counts from distinct sets: raw too');
});

/** Of hourStates' query, in the hour ROW_HOUR: `n`'s marks, those that wrote partials, and its latest settle. */
const ROW_HOUR = 500_000;
const stateRow = (n: number, marks: number, { partial = 0, settled = 0 } = {}) => ({
  a: 'a',
  m: 'm',
  h: ROW_HOUR,
  n,
  t: marks,
  r: marks,
  st: settled,
  sr: settled,
  p: partial,
});

t.test('statesOf: a second has partials when every insert that marked it wrote them', async (t) => {
  const hour = ROW_HOUR;
  const sec = (hour * 60 + 7) * 60;
  const row = (n: number, marks: number, partial: number) => stateRow(n, marks, { partial });
  const [s] = statesOf([row(sec, 3, 3), row(sec + 1, 3, 2), row(sec + 2, 1, 0)]);
  const seconds = s!.minutes.get(hour * 60 + 7)!.seconds;
  t.ok(hasPartials(seconds.get(sec)!), 'three marks, three with partials');
  t.notOk(
    hasPartials(seconds.get(sec + 1)!),
    'one insert of three without partials (an older consumer, USAGE_IDENTITY=timestamp)',
  );
  t.notOk(hasPartials(seconds.get(sec + 2)!), 'none');
  const [old] = statesOf([{ ...row(sec, 2, 0), p: undefined }]);
  t.notOk(hasPartials(old!.minutes.get(hour * 60 + 7)!.seconds.get(sec)!), 'marks read without the column: none');
});

t.test(
  'isReadFromPartials: an insert in flight is left out until its partials land, never after a recompute',
  async (t) => {
    const minute = ROW_HOUR * 60 + 7;
    const sec = minute * 60;
    const row = (n: number, marks: number, partial: number, settled = 0) => stateRow(n, marks, { partial, settled });
    const fromPartials = (rows: ReturnType<typeof row>[], second = sec) => {
      const [s] = statesOf(rows);
      const m = s!.minutes.get(Math.floor(second / 60))!;
      return isReadFromPartials(s!, m, m.seconds.get(second)!);
    };
    const written = row(sec + 1, 2, 2);
    t.ok(fromPartials([row(sec, 3, 3)]), 'every insert that marked it wrote its partials');
    t.ok(fromPartials([row(sec, 2, 1)]), 'one insert of two in flight, nothing recomputed: from the partials stored');
    t.ok(fromPartials([row(sec, 1, 0), written]), 'its only insert in flight, the meter’s others write partials');
    t.notOk(fromPartials([row(sec, 3, 2, 2)]), 'the second was recomputed once: its rows raw');
    t.notOk(
      fromPartials([row(sec, 3, 2), written, row(minute, 0, 0, 4)]),
      'its minute was recomputed (a minute settle): raw',
    );
    t.notOk(fromPartials([row(sec, 3, 2), written, row(WHOLE_HOUR, 0, 0, 1)]), 'its hour was recomputed: raw');
    t.ok(fromPartials([row(sec, 3, 3, 2)]), 'recomputed, but every insert since wrote partials: from them');
    t.notOk(
      fromPartials([row(sec, 2, 0), row(sec + 1, 1, 0)]),
      'no insert of the meter in this hour wrote partials (USAGE_IDENTITY=timestamp): raw',
    );
  },
);

t.test('statesOf: seconds gather into their minute; a minute settle covers its seconds', async (t) => {
  const hour = ROW_HOUR;
  const minute = hour * 60 + 7;
  const sec = minute * 60;
  const row = (n: number, marks: number, settled: number) => stateRow(n, marks, { settled });
  const [s] = statesOf([row(sec, 3, 3), row(sec + 1, 2, 0)]);
  const m = s!.minutes.get(minute)!;
  t.equal(m.touched, 5, 'the minute counts its seconds’ marks');
  t.ok(isMarkedPerSecond(m), 'marked per second only');
  t.notOk(isMinuteSettled(m), 'no minute settle yet');
  t.ok(isSecondSettled(m.seconds.get(sec)!), 'its first second settled');
  t.notOk(isSecondSettled(m.seconds.get(sec + 1)!), 'its second one pending');
  const [after] = statesOf([row(sec, 3, 3), row(sec + 1, 2, 0), row(minute, 0, 5)]);
  t.ok(isMinuteSettled(after!.minutes.get(minute)!), 'a minute settle of every mark of its seconds: settled');
  const [older] = statesOf([row(minute, 4, 4), row(sec + 1, 2, 2)]);
  const om = older!.minutes.get(minute)!;
  t.notOk(isMinuteSettled(om), 'an older consumer’s minute marks plus new second marks: the minute pending');
  t.notOk(isMarkedPerSecond(om), '… and not readable per second (its minute marks’ rows are in no second)');
  t.equal(sliceOf(hour, WHOLE_HOUR), 'hour');
  t.equal(sliceOf(hour, minute), 'minute');
  t.equal(sliceOf(hour, sec), 'second');
});

t.test('markOf: per second while the hour is open, the whole hour after', async (t) => {
  const now = 1_000 * H + 5 * 60_000;
  t.same(markOf(3_600_000 + 3, now), { hour: 1_000, minute: 3_600_003 }, 'this hour: its second');
  t.same(markOf(3_600_000 + 3_601, now), { hour: 1_001, minute: 3_603_601 }, 'a record ahead of the clock: its second');
  t.same(markOf(3_600_000 - 1, now), { hour: 999, minute: WHOLE_HOUR }, 'the last hour: whole');
});

t.test('scanRows: the subject’s account only; touched (meter, hour) pairs', async (t) => {
  const rows = [
    encodeRow('acct_a', 'mtr_1', 5 * H + 1, 'r1', '1', 0),
    encodeRow('acct_a', 'mtr_1', 5 * H + 2, 'r2', '1', 0),
    encodeRow('acct_a', 'mtr_2', 7 * H, 'r3', '-2.5', 0),
    encodeRow('acct_a', 'mtr_1', 9 * H - 1, 'r\\t4', '1', 0),
  ].join('');
  const into: TouchedHours = new Map();
  t.equal(scanRows(Buffer.from(rows), 'acct_a', into), undefined);
  t.same(
    [...into].map(([m, h]) => [m, [...h].sort()]),
    [
      [
        'mtr_1',
        [
          [18_000, 2],
          [32_399, 1],
        ],
      ],
      ['mtr_2', [[25_200, 1]]],
    ],
    'rows counted per (meter, epoch second)',
  );
  const forged = rows + encodeRow('acct_b', 'mtr_9', H, 'x', '1', 0);
  t.match(scanRows(Buffer.from(forged), 'acct_a', new Map()), /row 4 belongs to another account/);
  t.match(
    scanRows(Buffer.from(encodeRow('acct_ab', 'mtr_1', H, 'x', '1', 0)), 'acct_a', new Map()),
    /another account/,
    'a longer account id sharing the prefix is another account',
  );
  t.match(scanRows(Buffer.from('acct_a\tmtr_1\tnope\tx\t1\t0\n'), 'acct_a', new Map()), /malformed timestamp/);
  t.match(scanRows(Buffer.from('acct_a\tmtr_1\t5\tx\t1\t0'), 'acct_a', new Map()), /newline/);
});

t.test('scanAttributedRows: each row under its own account, one meter across accounts', async (t) => {
  const rows = [
    encodeRow('acct_a', 'mtr_1', 5 * H, 'r1', '1', 0),
    encodeRow('acct_b', 'mtr_1', 6 * H, 'r2', '1', 0),
    encodeRow('acct_a', 'mtr_1', 7 * H, 'r3', '1', 0),
    encodeRow('acct_b', 'mtr_2', 6 * H, 'r4', '1', 0),
  ].join('');
  const into: TouchedByAccount = new Map();
  t.equal(scanAttributedRows(Buffer.from(rows), into), undefined);
  const pairs = [...into].map(([a, m]) => [a, [...m].map(([id, h]) => [id, [...h.keys()].sort()])]);
  t.same(pairs, [
    ['acct_a', [['mtr_1', [18_000, 25_200]]]],
    [
      'acct_b',
      [
        ['mtr_1', [21_600]],
        ['mtr_2', [21_600]],
      ],
    ],
  ]);
  t.match(scanAttributedRows(Buffer.from('\tmtr_1\t5\tx\t1\t0\n'), new Map()), /row 0 names no account/);
});

t.test('a message counts the rows of every second it touches, live and late, under each row’s account', async (t) => {
  const now = 1_000 * H + 30 * 60_000; // half past an hour
  const live = encodeRow('acct_a', 'mtr_1', now - 1_000, 'r1', '1', 0).toString();
  const late = encodeRow('acct_b', 'mtr_1', now - 50 * H, 'r2', '1', 0).toString();
  const data = Buffer.from(live + late + live + live.replace('acct_a', 'acct_c'));
  const read = readMessageRows('customers.acct_op', data, 4);
  if (!('rows' in read)) throw new Error(read.poison);
  const counts = [...read.rows.accounts].map(([a, m]) => [a, [...m].map(([id, h]) => [id, [...h]])]);
  t.same(counts, [
    ['acct_a', [['mtr_1', [[3_601_799, 2]]]]],
    ['acct_b', [['mtr_1', [[3_421_800, 1]]]]],
    ['acct_c', [['mtr_1', [[3_601_799, 1]]]]],
  ]);
  const own = readMessageRows('acct_a', Buffer.from(live + live), 2);
  if (!('rows' in own)) throw new Error(own.poison);
  t.same([...own.rows.accounts.get('acct_a')!.get('mtr_1')!], [[3_601_799, 2]], 'one account’s live rows: one count');
  t.equal(own.rows.account, 'acct_a');
  t.match(readMessageRows('acct_a', Buffer.from(late), 1), { poison: /another account/ });
});

t.test('ReadCoalescer: concurrent identical reads share one computation, nothing is kept after', async (t) => {
  const c = new ReadCoalescer<number>();
  let runs = 0;
  const compute = async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 20));
    return runs;
  };
  const [x, y, z] = await Promise.all([c.run('k', compute), c.run('k', compute), c.run('other', compute)]);
  t.equal(x, y, 'same key: same answer');
  t.equal(runs, 2, 'one computation per key');
  t.not(z, undefined);
  t.equal(await c.run('k', compute), 3, 'a later read computes again');
});
