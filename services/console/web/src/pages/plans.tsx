import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Empty, ErrorBox, Pager, Panel } from '../ui/components.js';
import { formatInterval, formatTime, meterLabel } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { Plan } from '../lib/types.js';
import { useCatalog } from './subscriptions.js';

/**
 * Plans (docs/plans.md): every token reads the deployment's plans; an operator (admin) sees a plan's versions and
 * their items, and makes plans. A new version is made over the API (POST /v1/plans/{id}/versions).
 */
export function PlansPage() {
  const { api, isAdmin } = useApp();
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<Plan | null>(null);
  const list = useAsync(() => api.get<ListPage<Plan>>('/v1/plans', { page, per_page: 20 }), [page]);
  const catalog = useCatalog();
  const create = useAction(async (form: HTMLFormElement) => {
    const fd = new FormData(form);
    const v = (k: string) => String(fd.get(k) ?? '');
    const chosen = fd.getAll('product_id').map(String);
    const items = chosen.map((id) => {
      const p = catalog.data?.products.find((x) => x.id === id);
      return p && p.pricing !== 'flat' ? { product_id: id, meter_id: v('meter_id') } : { product_id: id };
    });
    const made = await api.post<Plan>('/v1/plans', {
      name: v('name'),
      currency: v('currency'),
      interval: v('interval'),
      interval_count: Number(v('interval_count') || 1),
      trial_days: Number(v('trial_days') || 0),
      items,
    });
    list.reload();
    setOpen(made);
  });
  const itemText = (i: Plan['items'][number]) =>
    `${catalog.data?.productName(i.product_id) ?? i.product_id}${i.quantity ? ` × ${i.quantity}` : ''}${
      i.meter_id ? ` · metered by ${catalog.data?.meterName(i.meter_id) ?? i.meter_id}` : ''
    }`;
  return (
    <>
      <Panel title="Plans">
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={catalog.error} />
        {list.data?.data.length === 0 && <Empty>No plans yet.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="plans">
            <thead>
              <tr>
                <th>plan</th>
                <th class="num">version</th>
                <th>billed</th>
                <th>items</th>
                {isAdmin && <th />}
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((p) => (
                <tr key={p.id} data-plan-id={p.id}>
                  <td>
                    {p.name}
                    <div class="id">{p.id}</div>
                  </td>
                  <td class="num">{p.version}</td>
                  <td>
                    {formatInterval(p)} in {p.currency}
                    {p.trial_days > 0 && <div class="hint">{p.trial_days}-day trial</div>}
                  </td>
                  <td>{p.items.map(itemText).join('; ')}</td>
                  {isAdmin && (
                    <td class="actions">
                      <button type="button" onClick={() => setOpen(p)}>
                        Versions
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
      {isAdmin && open && <PlanVersions plan={open} itemText={itemText} />}
      {isAdmin && (
        <Panel title="Create a plan">
          <ErrorBox error={create.error} />
          <form
            class="grid"
            aria-label="create a plan"
            onSubmit={(e) => {
              e.preventDefault();
              void create.run(e.currentTarget as HTMLFormElement);
            }}
          >
            <label>
              Name <input name="name" required />
            </label>
            <label>
              Currency <input name="currency" required placeholder="USD" size={4} />
            </label>
            <label>
              Interval{' '}
              <select name="interval">
                {['day', 'week', 'month', 'quarter', 'year'].map((i) => (
                  <option key={i} value={i} selected={i === 'month'}>
                    {i}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Intervals per period <input name="interval_count" type="number" min={1} max={12} value="1" />
            </label>
            <label>
              Trial days <input name="trial_days" type="number" min={0} value="0" />
            </label>
            <label class="wide">
              Products{' '}
              <select name="product_id" multiple required>
                {catalog.data?.products.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name} ({p.pricing}, {p.currency})
                  </option>
                ))}
              </select>
            </label>
            <label>
              Meter of usage-priced products{' '}
              <select name="meter_id">
                <option value="">—</option>
                {catalog.data?.meters
                  .filter((m) => m.scope === 'deployment')
                  .map((m) => (
                    <option key={m.id} value={m.id}>
                      {meterLabel(m, catalog.data!.meters)}
                    </option>
                  ))}
              </select>
            </label>
            <div class="wide">
              <button type="submit" disabled={create.busy}>
                Create plan
              </button>
            </div>
          </form>
        </Panel>
      )}
    </>
  );
}

/** Every version of a plan, newest first, with its items (each version is GET /v1/plans/{id}?version=n). */
function PlanVersions({ plan, itemText }: { plan: Plan; itemText: (i: Plan['items'][number]) => string }) {
  const { api } = useApp();
  const versions = useAsync(
    () =>
      Promise.all(
        Array.from({ length: plan.version }, (_, i) =>
          api.get<Plan>(`/v1/plans/${plan.id}`, { version: plan.version - i }),
        ),
      ),
    [plan.id, plan.version],
  );
  return (
    <Panel title={`${plan.name}: versions`}>
      <ErrorBox error={versions.error} onRetry={versions.reload} />
      {versions.data && (
        <table class="list" data-testid="plan-versions">
          <thead>
            <tr>
              <th class="num">version</th>
              <th>name</th>
              <th>billed</th>
              <th>items</th>
              <th>made</th>
            </tr>
          </thead>
          <tbody>
            {versions.data.map((v) => (
              <tr key={v.version} data-version={v.version}>
                <td class="num">{v.version}</td>
                <td>{v.name}</td>
                <td>
                  {formatInterval(v)}
                  {v.trial_days > 0 && <div class="hint">{v.trial_days}-day trial</div>}
                </td>
                <td>{v.items.map(itemText).join('; ')}</td>
                <td>{formatTime(v.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
