/**
 * RFC 3339 date-times with an explicit offset (`Z` or `±hh:mm`), normalised to UTC epoch milliseconds.
 * Hand-written rather than Date.parse: Date.parse accepts many other shapes (no offset = local time,
 * "2026-02-30" rolls over) and we must reject those precisely. Digits below the millisecond are dropped.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month === 2 && (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return 29;
  return DAYS[month - 1]!;
}

/** Epoch ms, or undefined when `s` is not a valid RFC 3339 date-time with an offset. */
export function parseTimestamp(s: string): number | undefined {
  const m = RFC3339.exec(s);
  if (m === null) return undefined;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  const hour = +m[4]!;
  const minute = +m[5]!;
  const second = +m[6]!;
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  let ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const frac = m[7];
  if (frac !== undefined) ms += frac.length >= 3 ? +frac.slice(0, 3) : +frac.padEnd(3, '0');
  if (m[8] !== undefined) {
    const oh = +m[9]!;
    const om = +m[10]!;
    if (oh > 23 || om > 59) return undefined;
    const offset = (oh * 60 + om) * 60_000;
    ms += m[8] === '+' ? -offset : offset;
  }
  return ms;
}

/** `2026-11-21T10:00:00.000Z` */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}
