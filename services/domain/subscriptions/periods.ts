import type { BillingAnchor, BillingInterval } from '../../../shared/vocabulary.js';

/**
 * Billing periods (docs/billing.md "Billing periods"): the one place that says which period an instant falls in for
 * a subscription. Every caller — the period close, threshold invoices, drafts, the upcoming invoice, the
 * representation, test clocks — asks `periodContaining` (or `currentPeriod`) with the subscription's schedule.
 *
 * - `calendar`: whole calendar intervals in UTC (a day; an ISO week from Monday; a month; a quarter and a year from
 *   1 January), the first period the one containing the start; interval_count n: n intervals per period, counted
 *   from that first one. Month/1/calendar is the original rule: calendar months, the first the creation month.
 * - `start`: anniversary billing. Periods begin at 00:00 UTC on the day of the start and every interval after it; a
 *   month-based period keeps the start's day of the month, clamped to the month's last day (31 Jan → 29 Feb → 31 Mar:
 *   each period is computed from the start, so the day never drifts).
 * All period bounds are UTC midnights, so an invoice's dates (period_start, period_end) say exactly what it covers.
 * The start is the trial's end when there is a trial (docs/billing.md "Trials"), else the creation.
 */
export interface Period {
  start: Date;
  end: Date;
}

export interface BillingTerms {
  interval: BillingInterval;
  interval_count: number;
  billing_anchor: BillingAnchor;
}

/** A subscription's periods: its terms and the instant its billing starts. */
export interface PeriodSchedule extends BillingTerms {
  startsAt: Date;
}

/** Today's (and the default) terms: calendar months. */
export const MONTHLY: BillingTerms = { interval: 'month', interval_count: 1, billing_anchor: 'calendar' };

const DAY_MS = 86_400_000;
const MONTHS: Partial<Record<BillingInterval, number>> = { month: 1, quarter: 3, year: 12 };
const DAYS: Partial<Record<BillingInterval, number>> = { day: 1, week: 7 };

/** The schedule of a subscription row: billing starts at the trial's end, if any, else at creation. */
export function scheduleOf(row: {
  created_at: Date;
  trial_end?: Date | null;
  interval?: BillingInterval;
  interval_count?: number;
  billing_anchor?: BillingAnchor;
}): PeriodSchedule {
  return {
    interval: row.interval ?? MONTHLY.interval,
    interval_count: row.interval_count ?? MONTHLY.interval_count,
    billing_anchor: row.billing_anchor ?? MONTHLY.billing_anchor,
    startsAt: row.trial_end ?? row.created_at,
  };
}

/** Months in one period (0 for day and week intervals). */
export function monthsPerPeriod(t: BillingTerms): number {
  return (MONTHS[t.interval] ?? 0) * t.interval_count;
}

/**
 * Whether metered items are billed per month inside the period rather than once at its end: periods longer than a
 * month (quarter, year, month × n). Their flat items are billed once per period in advance (reason `advance`).
 */
export function billsUsageMonthly(t: BillingTerms): boolean {
  return monthsPerPeriod(t) > 1;
}

/** The schedule whose periods are the invoices of usage: monthly inside a longer period, else the periods themselves. */
export function usageSchedule(s: PeriodSchedule): PeriodSchedule {
  return billsUsageMonthly(s) ? { ...s, interval: 'month', interval_count: 1 } : s;
}

function utcDay(d: Date): number {
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

/** Months since year 0 of a UTC instant's month. */
function monthIndex(d: Date): number {
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

/** 00:00 UTC of `day` (clamped to the month's last day) in the month `index` (monthIndex). */
function dayOfMonth(index: number, day: number): Date {
  const year = Math.floor(index / 12);
  const month = index - year * 12;
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(day, last)));
}

/** The first period's start: the calendar interval containing the start, or the start's day (anchor start). */
function firstStart(s: PeriodSchedule): Date {
  const at = s.startsAt;
  if (s.billing_anchor === 'start') return new Date(utcDay(at));
  switch (s.interval) {
    case 'day':
      return new Date(utcDay(at));
    case 'week':
      // ISO weeks begin on Monday (getUTCDay: Sunday 0).
      return new Date(utcDay(at) - ((at.getUTCDay() + 6) % 7) * DAY_MS);
    case 'month':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    case 'quarter':
      return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() - (at.getUTCMonth() % 3), 1));
    case 'year':
      return new Date(Date.UTC(at.getUTCFullYear(), 0, 1));
  }
}

/** The start of the n-th period (0: the first). */
function nthStart(s: PeriodSchedule, first: Date, n: number): Date {
  const days = DAYS[s.interval];
  if (days !== undefined) return new Date(first.getTime() + n * days * s.interval_count * DAY_MS);
  // Month-based: from the first period each time (never from the previous one), so a clamped day does not drift.
  const day = s.billing_anchor === 'start' ? s.startsAt.getUTCDate() : 1;
  return dayOfMonth(monthIndex(first) + n * monthsPerPeriod(s), day);
}

/** The period containing `at`; before the first period, the first. */
export function periodContaining(s: PeriodSchedule, at: Date): Period {
  const first = firstStart(s);
  const t = at.getTime();
  if (t < first.getTime()) return { start: first, end: nthStart(s, first, 1) };
  const days = DAYS[s.interval];
  let n =
    days !== undefined
      ? Math.floor((t - first.getTime()) / (days * s.interval_count * DAY_MS))
      : Math.floor((monthIndex(at) - monthIndex(first)) / monthsPerPeriod(s));
  // Month-based estimates can be one off around a clamped or mid-month anniversary.
  while (n > 0 && nthStart(s, first, n).getTime() > t) n--;
  while (nthStart(s, first, n + 1).getTime() <= t) n++;
  return { start: nthStart(s, first, n), end: nthStart(s, first, n + 1) };
}

/** The first period of a schedule. */
export function firstPeriod(s: PeriodSchedule): Period {
  return periodContaining(s, new Date(-8.64e15));
}

/**
 * Where a new subscription's billing starts (createSubscription): its terms with the defaults, the trial's end
 * (trial_end, or now + trial_days days), its first usage period (billing_period_start/_end: the first invoice of
 * usage) and, for periods longer than a month, its first period (advance_period_start/_end: its flat items are
 * billed at its start, or at the trial's end if later).
 */
export function billingStart(
  t: Partial<BillingTerms> & { trial_end?: Date; trial_days?: number },
  now: Date,
): { terms: BillingTerms; trialEnd: Date | null; usage: Period; advance: Period | null } {
  const terms: BillingTerms = {
    interval: t.interval ?? MONTHLY.interval,
    interval_count: t.interval_count ?? MONTHLY.interval_count,
    billing_anchor: t.billing_anchor ?? MONTHLY.billing_anchor,
  };
  const trialEnd = t.trial_end ?? (t.trial_days ? new Date(now.getTime() + t.trial_days * DAY_MS) : null);
  const schedule = scheduleOf({ ...terms, created_at: now, trial_end: trialEnd });
  return {
    terms,
    trialEnd,
    usage: periodContaining(usageSchedule(schedule), schedule.startsAt),
    advance: billsUsageMonthly(terms) ? periodContaining(schedule, schedule.startsAt) : null,
  };
}

/** Calendar months in UTC (the month/1/calendar rule; entitlements and alerts count usage per calendar month). */
export function monthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

export function nextMonthStart(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/** The period containing `at`, never before the first (month/1/calendar unless terms are given). */
export function periodAt(createdAt: Date, at: Date, terms: BillingTerms = MONTHLY): Period {
  return periodContaining({ ...terms, startsAt: createdAt }, at);
}

/**
 * Pause collection (docs/billing.md "Pause collection"): whether the period ending at `end` ends while collection is
 * paused — it is then not invoiced (Stripe's pause_collection `behavior: void`).
 */
export function pausedAt(
  sub: { collection_paused_at: Date | null; collection_resumed_at: Date | null },
  end: Date,
): boolean {
  const paused = sub.collection_paused_at;
  if (paused === null || paused.getTime() > end.getTime()) return false;
  const resumed = sub.collection_resumed_at;
  return resumed === null || resumed.getTime() <= paused.getTime() || resumed.getTime() > end.getTime();
}

/**
 * Active: the period containing now (the first one during a trial). Canceled: the period it was canceled in (its
 * last; the one ending at canceled_at when canceled at a period's end).
 */
export function currentPeriod(
  sub: {
    status: string;
    created_at: Date;
    canceled_at: Date | null;
    trial_end?: Date | null;
    interval?: BillingInterval;
    interval_count?: number;
    billing_anchor?: BillingAnchor;
  },
  now = new Date(),
): Period {
  // The last period billed is the one before canceled_at (it ends there when canceled at a period's end).
  const at = sub.status === 'canceled' && sub.canceled_at ? new Date(sub.canceled_at.getTime() - 1) : now;
  return periodContaining(scheduleOf(sub), at);
}
