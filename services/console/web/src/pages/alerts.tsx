import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { CustomerSelect, useCustomers } from '../ui/customers.js';
import { Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { formatTime, meterLabel } from '../lib/format.js';
import { decimalText, exactJson, type ListPage } from '../lib/api.js';
import type { Alert, Meter } from '../lib/types.js';

/**
 * Usage and spend alerts (docs/alerts.md): a customer sees, sets and deletes the alerts on itself; an operator
 * (admin) every customer's, and sets them for any customer — or, with no customer on a deployment meter, for all.
 */
export function AlertsPage() {
  const { api, canWrite, isAdmin } = useApp();
  const [page, setPage] = useState(1);
  const list = useAsync(() => api.get<ListPage<Alert>>('/v1/alerts', { page, per_page: 20 }), [page]);
  const meters = useAsync(() => api.get<ListPage<Meter>>('/v1/meters', { per_page: 100 }), []);
  const customers = useCustomers();
  const remove = useAction(async (a: Alert) => {
    await api.delete(`/v1/alerts/${a.id}`);
    list.reload();
  });
  const [metric, setMetric] = useState<'usage' | 'amount'>('usage');
  const [alertCustomer, setAlertCustomer] = useState('');
  const create = useAction(async (v: Record<string, string>) => {
    const thresholds = (v.thresholds ?? '')
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((t) => decimalText('thresholds', t));
    const target = v.customer_id?.trim() ? { customer_id: v.customer_id.trim() } : {};
    const what = metric === 'usage' ? { meter_id: v.meter_id } : { metric: 'amount', currency: v.currency };
    await api.post<Alert>('/v1/alerts', exactJson({ ...target, ...what, thresholds }));
    list.reload();
  });
  const meterName = (id: string | null) => meters.data?.data.find((m) => m.id === id)?.name ?? id;
  return (
    <>
      <Panel title="Alerts">
        <p class="hint">
          An alert sends one <code>alert.triggered</code> event (webhooks, the event log) the first time each threshold
          is reached in a billing period.
        </p>
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={remove.error} />
        {list.data?.data.length === 0 && <Empty>No alerts yet.</Empty>}
        {/* Shown once the meters are known too: a row names its meter, never an id that turns into a name later. */}
        {!!list.data?.data.length && (meters.data || meters.error) && (
          <table class="list" data-testid="alerts">
            <thead>
              <tr>
                {isAdmin && <th>customer</th>}
                <th>watches</th>
                <th class="num">thresholds</th>
                <th>created</th>
                {canWrite && <th />}
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((a) => (
                <tr key={a.id} data-alert-id={a.id}>
                  {isAdmin && (
                    <td>
                      {a.customer_id ? (
                        (customers.data?.label(a.customer_id) ?? a.customer_id)
                      ) : (
                        <span class="hint">every customer</span>
                      )}
                    </td>
                  )}
                  <td>
                    {a.metric === 'usage' ? `usage of ${meterName(a.meter_id)}` : `invoice amount in ${a.currency}`}
                    <div class="id">{a.id}</div>
                  </td>
                  <td class="num">{a.thresholds.join(', ')}</td>
                  <td>{formatTime(a.created_at)}</td>
                  {canWrite && (
                    <td class="actions">
                      <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.run(a)}>
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
      {canWrite && (
        <Panel title="Set an alert">
          <ErrorBox error={create.error} />
          <form class="grid" aria-label="set an alert" onSubmit={(e) => void create.run(formValues(e))}>
            {isAdmin && customers.data && (
              <CustomerSelect
                customers={customers.data.list}
                value={alertCustomer}
                onChange={setAlertCustomer}
                none="yourself, or every customer of a deployment meter"
                name="customer_id"
              />
            )}
            <label>
              Watch{' '}
              <select
                name="metric"
                value={metric}
                onChange={(e) => setMetric((e.currentTarget as HTMLSelectElement).value as 'usage' | 'amount')}
              >
                <option value="usage">usage of a meter</option>
                <option value="amount">invoice amount</option>
              </select>
            </label>
            {metric === 'usage' ? (
              <label>
                Meter{' '}
                <select name="meter_id" required>
                  {meters.data?.data.map((m) => (
                    <option key={m.id} value={m.id}>
                      {meterLabel(m, meters.data!.data)}
                    </option>
                  ))}
                </select>
              </label>
            ) : (
              <label>
                Currency <input name="currency" required placeholder="USD" size={4} />
              </label>
            )}
            <label class="wide">
              Thresholds <input name="thresholds" required placeholder="100, 500, 1000" />
            </label>
            <div class="wide">
              <button type="submit" disabled={create.busy}>
                Set alert
              </button>
            </div>
          </form>
        </Panel>
      )}
    </>
  );
}
