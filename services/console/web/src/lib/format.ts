/** Display helpers. Amounts arrive from the API already exact; they are only formatted here. */

import { minorUnits } from '../../../../../shared/money/currencies.js';
import type { Product } from './types.js';

/** Decimals the number needs (at most 9, the API's scale): 0.000000001 → 9, 12.5 → 1. */
function decimalsOf(n: number): number {
  for (let d = 0; d < 9; d++) if (Number(n.toFixed(d)) === n) return d;
  return 9;
}

/** "1,234.50 USD", "1,234 JPY"; unit prices keep their decimals ("0.000000001 USD"), padded to the minor unit. */
export function formatMoney(amount: number, currency: string): string {
  const shown = Math.max(minorUnits(currency), decimalsOf(amount));
  return `${amount.toLocaleString('en-US', { minimumFractionDigits: shown, maximumFractionDigits: shown })} ${currency}`;
}

export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return value.toLocaleString('en-US', { maximumFractionDigits: 9 });
}

/** "2026-11-23 14:05 UTC" */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** A plan's or subscription's billing interval: "every month", "every 3 months". */
export function formatInterval(p: { interval: string; interval_count: number }): string {
  return p.interval_count === 1 ? `every ${p.interval}` : `every ${p.interval_count} ${p.interval}s`;
}

/**
 * A billing period, both ends inclusive UTC days: "2026-11-01 → 2026-11-30". Subscriptions send instants
 * with an exclusive end (the next month's first midnight); invoices send inclusive dates.
 */
export function formatPeriod(start: string, end: string): string {
  const inclusiveEnd = end.includes('T') ? new Date(Date.parse(end) - 1).toISOString().slice(0, 10) : end;
  return `${start.slice(0, 10)} → ${inclusiveEnd}`;
}

/**
 * A product's price as its model bills it, one line per part: "49.99 USD / month", "0.001 USD / unit",
 * "2.50 USD / 1,000 units", and for tiers the mode then one line per tier ("up to 1,000: 0.00 USD / unit",
 * "above 10,000: 0.008 USD / unit + 5.00 USD").
 */
export function priceModelLines(p: Product): string[] {
  switch (p.pricing) {
    case 'flat':
      return [`${formatMoney(p.price, p.currency)} / month`];
    case 'metered':
      return [`${formatMoney(p.price, p.currency)} / unit`];
    case 'package':
      return [`${formatMoney(p.price, p.currency)} / ${formatNumber(p.package_size)} units`];
    case 'tiered': {
      const tiers = p.tiers ?? [];
      return [
        `${p.tiers_mode ?? 'graduated'} tiers`,
        ...tiers.map((tier, i) => {
          const range =
            tier.up_to !== null
              ? `up to ${formatNumber(tier.up_to)}`
              : i === 0
                ? 'every unit'
                : `above ${formatNumber(tiers[i - 1]!.up_to)}`;
          const flat = tier.flat_price ? ` + ${formatMoney(tier.flat_price, p.currency)}` : '';
          return `${range}: ${formatMoney(tier.unit_price, p.currency)} / unit${flat}`;
        }),
      ];
    }
  }
}

/**
 * A meter as people tell it apart in a list or a choice: its name, with its key when it has one, else with its id
 * when another meter of the list shares the name (names need not be unique; keys are).
 */
export function meterLabel(
  m: { id: string; name: string; key: string | null },
  all: { id: string; name: string }[],
): string {
  if (m.key) return `${m.name} (${m.key})`;
  return all.some((o) => o.id !== m.id && o.name === m.name) ? `${m.name} · ${m.id}` : m.name;
}
