import t from 'tap';
import { readPlan } from '../../shared/usage/query.js';
import { scanRows, type TouchedHours } from '../../shared/usage/row-scan.js';
import { encodeRow } from '../../shared/usage/wire.js';
import { HOUR_MS } from '../../shared/usage/rollups.js';
import { ReadCoalescer } from '../../shared/usage/coalesce.js';

const H = HOUR_MS;

t.test('readPlan: whole swept hours from rollups, edges and unswept hours raw', async (t) => {
  t.same(readPlan(10 * H, 20 * H, undefined), { rawRanges: [[10 * H, 20 * H]] }, 'before the first sweep: all raw');
  t.same(readPlan(10 * H, 20 * H, 30), { rollupHours: [10, 20], rawRanges: [] }, 'all swept: all rollups');
  t.same(
    readPlan(10 * H, 20 * H, 14),
    { rollupHours: [10, 15], rawRanges: [[15 * H, 20 * H]] },
    'the unswept tail raw',
  );
  t.same(
    readPlan(10 * H + 5, 20 * H - 7, 30),
    {
      rollupHours: [11, 19],
      rawRanges: [
        [10 * H + 5, 11 * H],
        [19 * H, 20 * H - 7],
      ],
    },
    'partial edge hours raw (a period ending mid-hour)',
  );
  t.same(readPlan(10 * H + 5, 10 * H + 9, 30), { rawRanges: [[10 * H + 5, 10 * H + 9]] }, 'inside one hour: raw');
  t.same(readPlan(10 * H, 20 * H, 5), { rawRanges: [[10 * H, 20 * H]] }, 'nothing swept in range: raw');
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
      ['mtr_1', [5, 8]],
      ['mtr_2', [7]],
    ],
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
