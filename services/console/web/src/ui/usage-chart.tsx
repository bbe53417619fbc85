import { useEffect, useRef, useState } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import { useApp } from './app-context.js';
import { useAsync } from './hooks.js';
import { ErrorBox } from './components.js';
import { chartSeries, defaultRange, rangeProblem, type UsageRange } from '../lib/usage.js';
import { formatNumber, formatTime } from '../lib/format.js';
import type { Meter, UsageReport } from '../lib/types.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

/**
 * A meter's usage over a date range in hour or day windows, drawn by Chart.js from GET /v1/meters/{id}/usage
 * (an operator's view of one customer on a deployment meter: `customer`, its external id).
 * The canvas carries the plotted labels and values (data-labels, data-values, read back from the chart
 * itself) for tests and assistive tools; a table below lists the same windows.
 */
export function UsageChart({ meter, customer }: { meter: Meter; customer?: string }) {
  const { api } = useApp();
  const [range, setRange] = useState<UsageRange>(() => defaultRange());
  const problem = rangeProblem(range);
  const report = useAsync(
    (): Promise<UsageReport | undefined> =>
      problem
        ? Promise.resolve(undefined)
        : api.typed((client) => client.getUsage(meter.id, { ...range, ...(customer ? { filter: { customer } } : {}) })),
    [meter.id, customer, range.start_date, range.end_date, range.window],
  );
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart<'bar', (number | null)[], string> | null>(null);

  useEffect(() => () => chart.current?.destroy(), []);
  useEffect(() => {
    if (!canvas.current || !report.data) return;
    const { labels, values } = chartSeries(report.data);
    if (!chart.current) {
      chart.current = new Chart(canvas.current, {
        type: 'bar',
        data: {
          labels,
          datasets: [
            { label: `${meter.name} (${meter.aggregation}, ${meter.unit})`, data: values, backgroundColor: '#3b6fd8' },
          ],
        },
        options: {
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          scales: { y: { beginAtZero: true } },
          plugins: { tooltip: { enabled: true } },
        },
      });
    } else {
      chart.current.data.labels = labels;
      chart.current.data.datasets[0]!.data = values;
      chart.current.update();
    }
    canvas.current.dataset.labels = JSON.stringify(chart.current.data.labels);
    canvas.current.dataset.values = JSON.stringify(chart.current.data.datasets[0]!.data);
  }, [report.data]);

  const set = (patch: Partial<UsageRange>) => setRange((r) => ({ ...r, ...patch }));
  return (
    <div class="usage">
      <form class="inline" onSubmit={(e) => e.preventDefault()}>
        <label>
          Window
          <select
            name="window"
            value={range.window}
            onChange={(e) => set({ window: (e.currentTarget as HTMLSelectElement).value as UsageRange['window'] })}
          >
            <option value="hour">hour</option>
            <option value="day">day</option>
          </select>
        </label>
        <DateField
          label="From (UTC)"
          name="start_date"
          value={range.start_date}
          onChange={(start_date) => set({ start_date })}
        />
        <DateField label="To (UTC)" name="end_date" value={range.end_date} onChange={(end_date) => set({ end_date })} />
        <button type="button" onClick={report.reload} disabled={report.loading}>
          Refresh
        </button>
      </form>
      {problem && (
        <div class="error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <ErrorBox error={report.error} onRetry={report.reload} />
      {report.data && (
        <p class="totals">
          Total <strong data-testid="usage-total">{formatNumber(report.data.value)}</strong> {meter.unit} (
          {report.data.aggregation}) from <strong data-testid="usage-count">{report.data.count}</strong> records,{' '}
          {report.data.start_date} to {report.data.end_date} (UTC)
        </p>
      )}
      <div class="chart-box">
        <canvas ref={canvas} aria-label={`Usage of ${meter.name}`} role="img" />
      </div>
      {report.data && (
        <details>
          <summary>Windows as a table</summary>
          <table>
            <thead>
              <tr>
                <th>start</th>
                <th>value</th>
                <th>records</th>
              </tr>
            </thead>
            <tbody>
              {report.data.data
                .filter((w) => w.count > 0)
                .map((w) => (
                  <tr key={w.start}>
                    <td>{formatTime(w.start)}</td>
                    <td class="num">{formatNumber(w.value)}</td>
                    <td class="num">{w.count}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </details>
      )}
    </div>
  );
}

/**
 * A UTC date typed as YYYY-MM-DD: the browser's date picker shows the user's locale (11/23/2026 in en-US) and
 * its day is local, while the API's ranges are UTC days written ISO. The range is checked as it is typed
 * (rangeProblem) and asked for once it is whole.
 */
function DateField(props: { label: string; name: string; value: string; onChange: (v: string) => void }) {
  return (
    <label>
      {props.label}
      <input
        type="text"
        name={props.name}
        value={props.value}
        inputMode="numeric"
        placeholder="YYYY-MM-DD"
        pattern="\d{4}-\d{2}-\d{2}"
        size={10}
        onInput={(e) => props.onChange((e.currentTarget as HTMLInputElement).value.trim())}
      />
    </label>
  );
}
