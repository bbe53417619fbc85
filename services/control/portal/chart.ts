import { Decimal } from '../../../shared/money/decimal.js';
import { esc } from '../hosted/templates.js';

/**
 * This period's usage of one meter as an inline SVG bar chart (no script: the portal's CSP allows none): one bar a
 * day, heights relative to the largest day, each bar titled with its date and exact value for screen readers and
 * hover (`title`: the day and value as the visit's language writes them). The exact total is printed beside it.
 */
export function usageChart(title: string, days: { start: string; value: string; title: string }[]): string {
  const width = 600;
  const height = 120;
  const values = days.map((d) => new Decimal(d.value || '0'));
  const max = values.reduce((m, v) => (v.gt(m) ? v : m), new Decimal(0));
  const slot = days.length ? width / days.length : width;
  const bars = days
    .map((d, i) => {
      const h = max.isZero()
        ? 0
        : values[i]!.div(max)
            .times(height - 10)
            .toNumber();
      return `<rect x="${(i * slot + 1).toFixed(1)}" y="${(height - h).toFixed(1)}" width="${Math.max(slot - 2, 1).toFixed(1)}" height="${h.toFixed(1)}" fill="#2b5bd7"><title>${esc(d.title)}</title></rect>`;
    })
    .join('');
  return `<svg class="usage" role="img" aria-label="${esc(title)}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg"><title>${esc(title)}</title><line x1="0" y1="${height}" x2="${width}" y2="${height}" stroke="#99a"/>${bars}</svg>`;
}
