import t from 'tap';
import {
  billsUsageMonthly,
  currentPeriod,
  periodContaining,
  type PeriodSchedule,
} from '../../services/domain/subscriptions/periods.js';
import type { BillingAnchor, BillingInterval } from '../../shared/vocabulary.js';

const d = (s: string) => new Date(s);
const day = (x: Date) => x.toISOString().slice(0, 10);
const sched = (interval: BillingInterval, anchor: BillingAnchor, startsAt: string, count = 1): PeriodSchedule => ({
  interval,
  interval_count: count,
  billing_anchor: anchor,
  startsAt: d(startsAt),
});
/** [start, end) of the period containing `at`, as dates. */
const span = (s: PeriodSchedule, at: string) => {
  const p = periodContaining(s, d(at));
  return `${day(p.start)}..${day(p.end)}`;
};
/** The first n periods' starts, walking period by period. */
const starts = (s: PeriodSchedule, n: number) => {
  const out: string[] = [];
  let at = d('1970-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const p = periodContaining(s, at);
    out.push(day(p.start));
    at = p.end;
  }
  return out;
};

t.test('month/1/calendar is calendar months from the creation month (the original rule)', async (t) => {
  const s = sched('month', 'calendar', '2026-01-20T10:00:00Z');
  t.equal(span(s, '2026-01-31T23:59:59.999Z'), '2026-01-01..2026-02-01');
  t.equal(span(s, '2026-02-01T00:00:00Z'), '2026-02-01..2026-03-01');
  t.equal(span(s, '2025-12-15T00:00:00Z'), '2026-01-01..2026-02-01', 'never before the first period');
  t.equal(span(s, '2026-12-15T00:00:00Z'), '2026-12-01..2027-01-01');
  const canceled = currentPeriod(
    { status: 'canceled', created_at: d('2026-01-20T00:00:00Z'), canceled_at: d('2026-03-10T00:00:00Z') },
    d('2026-06-01T00:00:00Z'),
  );
  t.equal(day(canceled.start), '2026-03-01', 'a canceled subscription shows the period it was canceled in');
});

t.test('anniversary on the 31st keeps its day, clamped per month, never drifting', async (t) => {
  t.same(starts(sched('month', 'start', '2028-01-31T15:30:00Z'), 5), [
    '2028-01-31',
    '2028-02-29',
    '2028-03-31',
    '2028-04-30',
    '2028-05-31',
  ]);
  t.same(starts(sched('month', 'start', '2027-01-31T00:00:00Z'), 3), ['2027-01-31', '2027-02-28', '2027-03-31']);
  t.equal(span(sched('month', 'start', '2027-01-31T00:00:00Z'), '2027-03-30T23:00:00Z'), '2027-02-28..2027-03-31');
  t.same(starts(sched('month', 'start', '2026-01-30T00:00:00Z', 1), 3), ['2026-01-30', '2026-02-28', '2026-03-30']);
  // Yearly from 29 February: 28 February in common years, 29 again in the next leap year.
  t.same(starts(sched('year', 'start', '2028-02-29T00:00:00Z'), 5), [
    '2028-02-29',
    '2029-02-28',
    '2030-02-28',
    '2031-02-28',
    '2032-02-29',
  ]);
});

t.test('ISO weeks begin on Monday, across a year boundary', async (t) => {
  // 2026-12-31 is a Thursday; its ISO week (2026-W53) runs Monday 28 December to Sunday 3 January.
  const s = sched('week', 'calendar', '2026-12-31T12:00:00Z');
  t.equal(span(s, '2026-12-31T12:00:00Z'), '2026-12-28..2027-01-04');
  t.equal(span(s, '2027-01-03T23:59:59.999Z'), '2026-12-28..2027-01-04');
  t.equal(span(s, '2027-01-04T00:00:00Z'), '2027-01-04..2027-01-11');
  // Anchor start: from the start's day (a Thursday), every 7 days.
  t.equal(span(sched('week', 'start', '2026-12-31T12:00:00Z'), '2027-01-07T00:00:00Z'), '2027-01-07..2027-01-14');
  t.equal(span(sched('week', 'calendar', '2026-12-31T12:00:00Z', 2), '2027-01-11T00:00:00Z'), '2027-01-11..2027-01-25');
});

t.test('quarters and years are calendar from 1 January', async (t) => {
  const q = sched('quarter', 'calendar', '2026-05-20T00:00:00Z');
  t.equal(span(q, '2026-05-20T00:00:00Z'), '2026-04-01..2026-07-01');
  t.equal(span(q, '2026-12-31T23:59:59Z'), '2026-10-01..2027-01-01');
  t.equal(span(q, '2027-01-01T00:00:00Z'), '2027-01-01..2027-04-01');
  const y = sched('year', 'calendar', '2026-11-27T00:00:00Z');
  t.equal(span(y, '2026-11-27T00:00:00Z'), '2026-01-01..2027-01-01');
  t.equal(span(y, '2028-02-29T00:00:00Z'), '2028-01-01..2029-01-01');
  t.equal(span(sched('day', 'calendar', '2026-11-27T13:00:00Z'), '2026-11-28T05:00:00Z'), '2026-11-28..2026-11-29');
});

t.test('interval_count multiplies the interval', async (t) => {
  const m3 = sched('month', 'calendar', '2026-11-15T00:00:00Z', 3);
  t.same(starts(m3, 3), ['2026-11-01', '2027-02-01', '2027-05-01']);
  const m2s = sched('month', 'start', '2027-12-31T00:00:00Z', 2);
  t.same(starts(m2s, 4), ['2027-12-31', '2028-02-29', '2028-04-30', '2028-06-30']);
  t.same(starts(sched('day', 'start', '2026-02-27T08:00:00Z', 3), 3), ['2026-02-27', '2026-03-02', '2026-03-05']);
  t.same(starts(sched('year', 'calendar', '2026-06-01T00:00:00Z', 2), 2), ['2026-01-01', '2028-01-01']);
  t.equal(span(sched('quarter', 'start', '2026-01-31T00:00:00Z', 2), '2026-08-01T00:00:00Z'), '2026-07-31..2027-01-31');
});

t.test('usage is billed per month inside periods longer than a month', async (t) => {
  t.notOk(billsUsageMonthly({ interval: 'month', interval_count: 1, billing_anchor: 'calendar' }));
  t.notOk(billsUsageMonthly({ interval: 'week', interval_count: 12, billing_anchor: 'calendar' }));
  t.ok(billsUsageMonthly({ interval: 'month', interval_count: 2, billing_anchor: 'start' }));
  t.ok(billsUsageMonthly({ interval: 'quarter', interval_count: 1, billing_anchor: 'calendar' }));
  t.ok(billsUsageMonthly({ interval: 'year', interval_count: 1, billing_anchor: 'calendar' }));
});
