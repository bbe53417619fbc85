import { useState } from 'preact/hooks';
import { discountText } from './coupons.js';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, Pager, Panel, StatusFilter } from '../ui/components.js';
import { formatInterval, formatPeriod, formatTime, priceModelLines } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { Meter, Plan, Product, Subscription } from '../lib/types.js';

/** The catalog and the account's meters, for names and for the create form (first 100 of each). */
export function useCatalog() {
  const { api } = useApp();
  return useAsync(async () => {
    const [products, meters] = await Promise.all([
      api.get<ListPage<Product>>('/v1/products', { per_page: 100 }),
      api.get<ListPage<Meter>>('/v1/meters', { per_page: 100, status: 'active' }),
    ]);
    return {
      products: products.data,
      meters: meters.data,
      productName: (id: string) => products.data.find((p) => p.id === id)?.name ?? id,
      meterName: (id: string) => meters.data.find((m) => m.id === id)?.name ?? id,
    };
  }, []);
}

export function SubscriptionsPage() {
  const { api, canWrite } = useApp();
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const list = useAsync(
    () => api.get<ListPage<Subscription>>('/v1/subscriptions', { status, page, per_page: 20 }),
    [status, page],
  );
  const catalog = useCatalog();
  // Plan names for subscriptions made from a plan (docs/plans.md); every token reads plans.
  const plans = useAsync(() => api.get<ListPage<Plan>>('/v1/plans', { per_page: 100 }), []);
  const planName = (id: string) => plans.data?.data.find((p) => p.id === id)?.name ?? id;
  const cancel = useAction(async (s: Subscription) => {
    await api.patch(`/v1/subscriptions/${s.id}`, { status: 'canceled' });
    list.reload();
  });
  return (
    <>
      <Panel
        title="Subscriptions"
        actions={
          <StatusFilter
            value={status}
            statuses={['active', 'canceled']}
            onChange={(s) => {
              setStatus(s);
              setPage(1);
            }}
          />
        }
      >
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={catalog.error} />
        <ErrorBox error={cancel.error} />
        {list.data?.data.length === 0 && <Empty>No subscriptions yet.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="subscriptions">
            <thead>
              <tr>
                <th>subscription</th>
                <th>items</th>
                <th>status</th>
                <th>current period</th>
                <th>discount</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((s) => (
                <tr key={s.id} data-subscription-id={s.id}>
                  <td>
                    <code>{s.id}</code>
                    <div class="id">{s.currency}</div>
                    {s.plan_id && (
                      <div class="plan" data-testid="subscription-plan">
                        plan {planName(s.plan_id)} · version {s.plan_version}
                      </div>
                    )}
                  </td>
                  <td>
                    <ul class="plain">
                      {s.items.map((i) => (
                        <li key={i.product_id}>
                          {catalog.data?.productName(i.product_id) ?? i.product_id}
                          {i.meter_id && (
                            <>
                              {' '}
                              · metered by{' '}
                              <a href={`#/meters/${i.meter_id}`}>{catalog.data?.meterName(i.meter_id) ?? i.meter_id}</a>
                            </>
                          )}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <Badge value={s.status} />
                  </td>
                  <td>
                    {formatPeriod(s.current_period_start, s.current_period_end)}
                    <div class="id" data-testid="subscription-terms">
                      {formatInterval(s)}
                      {s.billing_anchor === 'start' && ' · on the anniversary'}
                    </div>
                    {s.trial_end && Date.parse(s.trial_end) > Date.now() && (
                      <div data-testid="trial-end">trial until {formatTime(s.trial_end)}</div>
                    )}
                  </td>
                  <td data-testid="discount">
                    {s.discount ? discountText(s.discount) : <span class="hint">none</span>}
                  </td>
                  <td class="actions">
                    <a class="button" href={`#/invoices/upcoming/${s.id}`}>
                      Upcoming invoice
                    </a>
                    {canWrite && s.status === 'active' && (
                      <button type="button" disabled={cancel.busy} onClick={() => cancel.run(s)}>
                        Cancel
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
      {canWrite && catalog.data && (
        <CreateSubscription products={catalog.data.products} meters={catalog.data.meters} onCreated={list.reload} />
      )}
    </>
  );
}

function CreateSubscription({
  products,
  meters,
  onCreated,
}: {
  products: Product[];
  meters: Meter[];
  onCreated: () => void;
}) {
  const { api } = useApp();
  const [chosen, setChosen] = useState<Record<string, string>>({}); // product id → meter id ('' for flat)
  const create = useAction(async () => {
    await api.post('/v1/subscriptions', {
      items: Object.entries(chosen).map(([product_id, meter_id]) =>
        meter_id ? { product_id, meter_id } : { product_id },
      ),
    });
    setChosen({});
    onCreated();
  });
  if (!products.length)
    return (
      <Panel title="Subscribe">
        <Empty>The catalog has no products yet.</Empty>
      </Panel>
    );
  return (
    <Panel title="Subscribe">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <table class="list">
          <tbody>
            {products.map((p) => (
              <tr key={p.id}>
                <td>
                  <label>
                    <input
                      type="checkbox"
                      checked={p.id in chosen}
                      onChange={(e) => {
                        const next = { ...chosen };
                        if ((e.currentTarget as HTMLInputElement).checked)
                          next[p.id] = p.pricing !== 'flat' ? (meters[0]?.id ?? '') : '';
                        else delete next[p.id];
                        setChosen(next);
                      }}
                    />{' '}
                    {p.name}
                  </label>
                </td>
                <td>{priceModelLines(p).join('; ')}</td>
                <td>
                  {/* Every model but flat prices a meter's usage. */}
                  {p.pricing !== 'flat' && p.id in chosen && (
                    <select
                      value={chosen[p.id]}
                      onChange={(e) => setChosen({ ...chosen, [p.id]: (e.currentTarget as HTMLSelectElement).value })}
                    >
                      {meters.map((m) => (
                        <option key={m.id} value={m.id}>
                          {m.name}
                        </option>
                      ))}
                    </select>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <button type="submit" disabled={create.busy || Object.keys(chosen).length === 0}>
          Create subscription
        </button>
      </form>
      <ErrorBox error={create.error} />
    </Panel>
  );
}
