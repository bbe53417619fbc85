import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { formatNumber, formatTime, meterLabel } from '../lib/format.js';
import { decimalText, exactJson, type ListPage } from '../lib/api.js';
import type { Entitlement, EntitlementCheck, Meter } from '../lib/types.js';
import { CustomerSelect, useCustomers } from '../ui/customers.js';
import { ENTITLEMENT_OVERAGES, ENTITLEMENT_PERIODS } from '../../../../../shared/vocabulary.js';

/**
 * Entitlements (docs/entitlements.md): a customer sees its own with their balances now (each row asks
 * `GET /v1/entitlements/check`, as the product would); an operator sees every customer's and entitles one.
 */
export function EntitlementsPage() {
  const { api, isAdmin } = useApp();
  const customers = useCustomers();
  const [page, setPage] = useState(1);
  const list = useAsync(() => api.get<ListPage<Entitlement>>('/v1/entitlements', { page, per_page: 20 }), [page]);
  return (
    <>
      <Panel title="Entitlements">
        <ErrorBox error={list.error} onRetry={list.reload} />
        {list.data?.data.length === 0 && <Empty>No entitlements yet.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="entitlements">
            <thead>
              <tr>
                <th>feature</th>
                {isAdmin && <th>customer</th>}
                <th>limit</th>
                <th>used</th>
                <th>balance</th>
                <th>access</th>
                <th>created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((e) => (
                <EntitlementRow
                  key={e.id}
                  e={e}
                  showCustomer={isAdmin}
                  customer={customers.data?.label(e.customer_id) ?? e.customer_id}
                />
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
      {isAdmin && <CreateEntitlement onCreated={list.reload} />}
    </>
  );
}

function EntitlementRow({ e, showCustomer, customer }: { e: Entitlement; showCustomer: boolean; customer: string }) {
  const { api } = useApp();
  const check = useAsync(
    () =>
      api.get<EntitlementCheck>('/v1/entitlements/check', {
        feature: e.feature,
        customer: showCustomer ? e.customer_id : undefined,
      }),
    [e.id],
  );
  const c = check.data;
  const terms = e.type === 'metered' ? `${formatNumber(e.limit)} per ${e.period} (${e.overage})` : 'on';
  return (
    <tr data-entitlement-id={e.id} data-feature={e.feature}>
      <td>
        <code>{e.feature}</code>
        <div class="id">{e.id}</div>
      </td>
      {showCustomer && (
        <td>
          <a href={`#/customers/${e.customer_id}`}>{customer}</a>
        </td>
      )}
      <td>{terms}</td>
      <td data-testid="usage">{c ? formatNumber(c.usage) : ''}</td>
      <td data-testid="balance">{c ? (e.type === 'metered' ? formatNumber(c.balance) : '—') : ''}</td>
      <td data-testid="access">{c ? c.has_access ? 'yes' : 'no' : <ErrorBox error={check.error} />}</td>
      <td>{formatTime(e.created_at)}</td>
    </tr>
  );
}

/** Operators: entitle a customer to a feature (metered: a meter, a limit per period). */
function CreateEntitlement({ onCreated }: { onCreated: () => void }) {
  const { api } = useApp();
  const [type, setType] = useState<'metered' | 'boolean'>('metered');
  const customers = useCustomers();
  const [customer, setCustomer] = useState('');
  const meters = useAsync(() => api.get<ListPage<Meter>>('/v1/meters', { per_page: 100 }), []);
  const create = useAction(async (v: Record<string, string>) => {
    const base = { customer_id: v.customer_id?.trim(), feature: v.feature?.trim(), type };
    await api.post(
      '/v1/entitlements',
      type === 'boolean'
        ? base
        : exactJson({
            ...base,
            meter_id: v.meter_id,
            limit: decimalText('limit', v.limit ?? ''),
            period: v.period,
            overage: v.overage,
          }),
    );
    onCreated();
  });
  return (
    <Panel title="Entitle a customer">
      <form class="grid" aria-label="create entitlement" onSubmit={(e) => void create.run(formValues(e))}>
        {customers.data && (
          <CustomerSelect
            customers={customers.data.list}
            value={customer}
            onChange={setCustomer}
            none="choose a customer…"
            name="customer_id"
          />
        )}
        <label>
          Feature <input name="feature" required placeholder="gpt-4.calls" />
        </label>
        <label>
          Type
          <select
            name="type"
            value={type}
            onChange={(e) => setType((e.target as HTMLSelectElement).value as 'metered')}
          >
            <option value="metered">metered</option>
            <option value="boolean">boolean</option>
          </select>
        </label>
        {type === 'metered' && (
          <>
            <label>
              Meter
              <select name="meter_id" required>
                {meters.data?.data.map((m) => (
                  <option key={m.id} value={m.id}>
                    {meterLabel(m, meters.data!.data)}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Limit <input name="limit" required inputMode="decimal" placeholder="1000" />
            </label>
            <label>
              Period
              <select name="period">
                {ENTITLEMENT_PERIODS.map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Overage
              <select name="overage">
                {ENTITLEMENT_OVERAGES.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </label>
          </>
        )}
        <button type="submit" disabled={create.busy}>
          Create entitlement
        </button>
      </form>
      <ErrorBox error={create.error} />
    </Panel>
  );
}

/** A meter as an option: its name, unit and scope — and its id when another meter has the same name. */
