import { Decimal, roundToMinorUnit, type DecimalValue } from '../../../shared/money/decimal.js';

/**
 * Proration (docs/design.md §8 Subscription). An item added, removed or changed during a period was on the
 * subscription for part of it only (services/domain/subscriptions/store.ts keeps each item's history):
 * - a flat item costs its price × quantity × seconds on / seconds in the period — exact, rounded once, at the
 *   line, to the currency's minor unit; a minimum commitment shrinks the same way;
 * - a usage-priced item counts the usage timestamped while it was on (its interval, cut at a cancellation).
 * An item on for the whole period is not pro-rated (nor is one on since the subscription began: the first
 * period bills in full, as the design says; a cancellation bills flat items in full too).
 */
export interface ServiceInterval {
  /** The part of the period the item was on: [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  periodStartMs: number;
  periodEndMs: number;
}

/**
 * The part of [periodStartMs, periodEndMs) an item on over [effectiveFrom, effectiveTo) covers; null: all of
 * it. effectiveFrom null: on since the subscription began; effectiveTo null: still on.
 */
export function serviceInterval(
  effectiveFrom: Date | null,
  effectiveTo: Date | null,
  periodStartMs: number,
  periodEndMs: number,
): ServiceInterval | null {
  const fromMs = Math.max(periodStartMs, effectiveFrom?.getTime() ?? -Infinity);
  const toMs = Math.min(periodEndMs, effectiveTo?.getTime() ?? Infinity);
  if (fromMs === periodStartMs && toMs === periodEndMs) return null;
  return { fromMs, toMs: Math.max(fromMs, toMs), periodStartMs, periodEndMs };
}

/** amount × seconds on / seconds in the period, exact (not rounded). */
export function prorated(amount: DecimalValue, s: ServiceInterval): Decimal {
  return new Decimal(amount).times(s.toMs - s.fromMs).div(s.periodEndMs - s.periodStartMs);
}

/** A flat item's pro-rated amount: the one rounding, at the line. */
export function proratedAmount(amount: DecimalValue, s: ServiceInterval, currency: string): Decimal {
  return roundToMinorUnit(prorated(amount, s), currency);
}

const SECOND = 1000;
const UNITS: [string, number][] = [
  ['d', 86_400 * SECOND],
  ['h', 3_600 * SECOND],
  ['min', 60 * SECOND],
  ['s', SECOND],
];

/** 1,047,600 s → "12 d 3 h"; units that are 0 are left out; "0 s" for nothing. */
export function durationText(ms: number): string {
  const parts: string[] = [];
  let rest = Math.round(ms / SECOND) * SECOND;
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n} ${unit}`);
  }
  return parts.length ? parts.join(' ') : '0 s';
}

const instant = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.000Z$/, '')
    .replace(/Z$/, '');

/** "pro-rated 12 d 3 h of 30 d (2026-11-18 21:00:00 to 2026-12-01 00:00:00 UTC)": what a pro-rated line says. */
export function prorationText(s: ServiceInterval): string {
  return `pro-rated ${durationText(s.toMs - s.fromMs)} of ${durationText(s.periodEndMs - s.periodStartMs)} (${instant(s.fromMs)} to ${instant(s.toMs)} UTC)`;
}
