import t from 'tap';
import { Decimal } from '../../shared/money/decimal.js';
import { reachedThresholds, watchedPeriods } from '../../services/domain/alerts/evaluate.js';

// The alert evaluator's rules without a server (docs/alerts.md): which thresholds a value has reached, and which
// billing periods a pass watches — the current month, and the previous one during the grace for late records.

t.test('a threshold is reached at or past it, exactly', async (t) => {
  const thresholds = ['100', '500', '1000'];
  t.same(reachedThresholds(thresholds, new Decimal('99.999999999')), []);
  t.same(reachedThresholds(thresholds, new Decimal('100')), ['100']);
  t.same(reachedThresholds(thresholds, new Decimal('999.9')), ['100', '500']);
  t.same(reachedThresholds(thresholds, new Decimal('1000000')), ['100', '500', '1000'], 'several at once: each');
  t.same(reachedThresholds(['0.1'], new Decimal('0.3').minus('0.2')), ['0.1'], 'decimal, not float, maths');
});

t.test('periods watched: the current month, and the previous one during the grace', async (t) => {
  const hour = 3_600_000;
  const iso = (ps: { start: Date; end: Date }[]) => ps.map((p) => [p.start.toISOString(), p.end.toISOString()]);
  t.same(iso(watchedPeriods(new Date('2026-11-27T08:00:00Z'), hour)), [
    ['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
  ]);
  t.same(iso(watchedPeriods(new Date('2026-12-01T00:59:59.999Z'), hour)), [
    ['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
  ]);
  t.same(iso(watchedPeriods(new Date('2026-12-01T01:00:00Z'), hour)), [
    ['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
  ]);
  t.same(
    iso(watchedPeriods(new Date('2027-01-01T00:00:00Z'), hour))[1],
    ['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    'across a year',
  );
});
