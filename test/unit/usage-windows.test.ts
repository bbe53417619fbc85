import t from 'tap';
import { windowsOf } from '../../shared/usage/windows.js';
import { resolveRange } from '../../services/control/usage/input.js';

const D = (s: string) => Date.parse(s);

t.test('windows cover the range, clipped, in order', async (t) => {
  const start = D('2026-01-30T00:00:00Z');
  const end = D('2026-03-03T00:00:00Z');
  const months = windowsOf('month', start, end);
  t.same(
    months.map((w) => [w.key, new Date(w.start).toISOString(), new Date(w.end).toISOString()]),
    [
      [202601, '2026-01-30T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
      [202602, '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
      [202603, '2026-03-01T00:00:00.000Z', '2026-03-03T00:00:00.000Z'],
    ],
  );
  const dec = windowsOf('month', D('2025-12-01T00:00:00Z'), D('2026-01-02T00:00:00Z'));
  t.same(
    dec.map((w) => w.key),
    [202512, 202601],
    'year boundary',
  );
  const days = windowsOf('day', start, end);
  t.equal(days.length, 32);
  t.equal(days[0]!.key, start / 86_400_000);
  t.equal(days[31]!.end, end);
  t.equal(windowsOf('hour', start, start + 86_400_000).length, 24);
  t.same(windowsOf('none', start, end), [{ key: 0, start, end }]);
});

t.test('date range: defaults and limits', async (t) => {
  const now = D('2026-11-21T10:00:00Z');
  t.match(resolveRange({}, now), {
    startDate: '2026-11-01',
    endDate: '2026-11-21',
    startMs: D('2026-11-01T00:00:00Z'),
    endMs: D('2026-11-22T00:00:00Z'),
  });
  t.match(resolveRange({ end_date: '2026-02-10' }, now), { startDate: '2026-02-01', endDate: '2026-02-10' });
  t.match(resolveRange({ start_date: '2026-11-21', end_date: '2026-11-21' }, now), {
    startMs: D('2026-11-21T00:00:00Z'),
    endMs: D('2026-11-22T00:00:00Z'),
  });
  t.match(
    resolveRange({ start_date: '2025-11-21', end_date: '2026-11-20' }, now),
    { startDate: '2025-11-21' },
    '365 days',
  );
  t.match(
    resolveRange({ start_date: '2024-01-01', end_date: '2024-12-31' }, now),
    { startDate: '2024-01-01' },
    '366 days (leap year)',
  );
  t.throws(() => resolveRange({ start_date: '2024-01-01', end_date: '2025-01-01' }, now), {
    code: 'validation_failed',
    errors: [{ field: 'end_date', message: 'the range must span at most 366 days' }],
  });
  t.throws(() => resolveRange({ start_date: '2026-11-22', end_date: '2026-11-21' }, now), {
    code: 'validation_failed',
    errors: [{ field: 'start_date', message: 'must not be after end_date' }],
  });
});
