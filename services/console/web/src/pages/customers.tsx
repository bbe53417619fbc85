import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { UsageChart } from '../ui/usage-chart.js';
import { formatMoney, formatPeriod, formatTime, meterLabel } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { Customer, Invoice, Meter, Subscription } from '../lib/types.js';

/** Operators (admin): the deployment's customers, found by external id, and a new one. */
export function CustomersPage() {
  const { api, navigate } = useApp();
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const list = useAsync(
    () => api.get<ListPage<Customer>>('/v1/customers', { external_id: search || undefined, page, per_page: 20 }),
    [search, page],
  );
  const create = useAction(async (v: Record<string, string>) => {
    const c = await api.post<Customer>('/v1/customers', {
      name: v.name,
      external_id: v.external_id,
      ...(v.email ? { email: v.email } : {}),
    });
    navigate(`/customers/${c.id}`);
  });
  return (
    <>
      <Panel
        title="Customers"
        actions={
          <form
            class="inline"
            aria-label="find a customer"
            onSubmit={(e) => {
              setSearch((formValues(e).external_id ?? '').trim());
              setPage(1);
            }}
          >
            <input name="external_id" placeholder="external id" aria-label="external id" defaultValue={search} />
            <button type="submit">Find</button>
          </form>
        }
      >
        <ErrorBox error={list.error} onRetry={list.reload} />
        {list.data?.data.length === 0 && (
          <Empty>{search ? `No customer has external id ${search}.` : 'No customers yet.'}</Empty>
        )}
        {!!list.data?.data.length && (
          <table class="list" data-testid="customers">
            <thead>
              <tr>
                <th>name</th>
                <th>external id</th>
                <th>email</th>
                <th>created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((c) => (
                <tr key={c.id} data-customer-id={c.id}>
                  <td>
                    <a href={`#/customers/${c.id}`}>{c.name}</a>
                    <div class="id">{c.id}</div>
                  </td>
                  <td>{c.external_id ?? <span class="hint">none</span>}</td>
                  <td>{c.email ?? ''}</td>
                  <td>{formatTime(c.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
      <Panel title="Create a customer">
        <form class="grid" onSubmit={(e) => void create.run(formValues(e))}>
          <label>
            Name <input name="name" required placeholder="Acme Corp" />
          </label>
          <label>
            External id <input name="external_id" required placeholder="acme-42" />
          </label>
          <label>
            Email <input name="email" type="email" placeholder="billing@acme.example" />
          </label>
          <button type="submit" disabled={create.busy}>
            Create customer
          </button>
        </form>
        <ErrorBox error={create.error} />
      </Panel>
    </>
  );
}

/** One customer: its usage on the deployment's meters, its subscriptions and its invoices. */
export function CustomerPage({ id }: { id: string }) {
  const { api } = useApp();
  const customer = useAsync(() => api.get<Customer>(`/v1/customers/${id}`), [id]);
  const meters = useAsync(() => api.get<ListPage<Meter>>('/v1/meters', { per_page: 100 }), []);
  const subs = useAsync(
    () => api.get<ListPage<Subscription>>('/v1/subscriptions', { customer_id: id, per_page: 100 }),
    [id],
  );
  const invoices = useAsync(
    () => api.get<ListPage<Invoice>>('/v1/billing/invoices', { customer_id: id, per_page: 20 }),
    [id],
  );
  const c = customer.data;
  const deployment = meters.data?.data.filter((m) => m.scope === 'deployment') ?? [];
  return (
    <>
      <Panel title={c ? `Customer: ${c.name}` : 'Customer'}>
        <p>
          <a href="#/customers">← all customers</a>
        </p>
        <ErrorBox error={customer.error} onRetry={customer.reload} />
        {c && (
          <dl class="facts">
            <dt>id</dt>
            <dd>
              <code>{c.id}</code>
            </dd>
            <dt>external id</dt>
            <dd data-testid="external-id">{c.external_id ?? 'none'}</dd>
            <dt>account</dt>
            <dd>
              <code>{c.account_id}</code>
            </dd>
            <dt>email</dt>
            <dd>{c.email ?? '—'}</dd>
          </dl>
        )}
      </Panel>
      <Panel title="Usage on deployment meters">
        <ErrorBox error={meters.error} onRetry={meters.reload} />
        {c && !c.external_id && <Empty>Give this customer an external id to read its usage here.</Empty>}
        {meters.data && deployment.length === 0 && <Empty>The deployment has no meters yet.</Empty>}
        {c?.external_id &&
          deployment.map((m) => (
            <section key={m.id} data-meter-id={m.id}>
              <h3>
                {meterLabel(m, deployment)} <span class="id">{m.id}</span>
              </h3>
              <UsageChart meter={m} customer={c.external_id!} />
            </section>
          ))}
      </Panel>
      <Panel title="Subscriptions">
        <ErrorBox error={subs.error} onRetry={subs.reload} />
        {subs.data?.data.length === 0 && <Empty>No subscriptions.</Empty>}
        {!!subs.data?.data.length && (
          <table class="list" data-testid="customer-subscriptions">
            <thead>
              <tr>
                <th>subscription</th>
                <th>status</th>
                <th>current period</th>
              </tr>
            </thead>
            <tbody>
              {subs.data.data.map((s) => (
                <tr key={s.id}>
                  <td>
                    <code>{s.id}</code>
                  </td>
                  <td>
                    <Badge value={s.status} />
                  </td>
                  <td>{formatPeriod(s.current_period_start, s.current_period_end)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
      <Panel title="Invoices">
        <ErrorBox error={invoices.error} onRetry={invoices.reload} />
        {invoices.data?.data.length === 0 && <Empty>No invoices.</Empty>}
        {!!invoices.data?.data.length && (
          <table class="list" data-testid="customer-invoices">
            <thead>
              <tr>
                <th>invoice</th>
                <th>period</th>
                <th>status</th>
                <th class="num">amount</th>
              </tr>
            </thead>
            <tbody>
              {invoices.data.data.map((inv) => (
                <tr key={inv.id!}>
                  <td>
                    <code>{inv.id}</code>
                  </td>
                  <td>{formatPeriod(inv.period_start, inv.period_end)}</td>
                  <td>
                    <Badge value={inv.status} />
                  </td>
                  <td class="num">{formatMoney(inv.amount, inv.currency)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
    </>
  );
}
