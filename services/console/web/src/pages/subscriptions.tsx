import { useState } from 'preact/hooks';
import { discountText } from './coupons.js';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, formValues, Pager, Panel, StatusFilter } from '../ui/components.js';
import { CustomerSelect, useCustomers } from '../ui/customers.js';
import { formatInterval, formatPeriod, formatTime, priceModelLines } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { Coupon, Customer, Meter, Plan, PortalSettings, Product, Subscription } from '../lib/types.js';

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

/**
 * Subscriptions: a customer's own; an operator's, every customer's (scope=deployment, filtered by customer), with
 * coupons applied and removed here and a customer subscribed to a plan or to products.
 */
export function SubscriptionsPage() {
  const { api, canWrite, isAdmin } = useApp();
  const [status, setStatus] = useState('');
  const [customer, setCustomer] = useState('');
  const [page, setPage] = useState(1);
  const customers = useCustomers();
  const list = useAsync(
    () =>
      api.get<ListPage<Subscription>>('/v1/subscriptions', {
        status,
        scope: isAdmin ? 'deployment' : undefined,
        customer_id: customer || undefined,
        page,
        per_page: 20,
      }),
    [status, customer, page],
  );
  const coupons = useAsync(
    async () => (isAdmin ? (await api.get<ListPage<Coupon>>('/v1/coupons', { per_page: 100 })).data : []),
    [isAdmin],
  );
  const setCoupon = useAction(async (s: Subscription, couponId: string | null) => {
    await api.patch(`/v1/subscriptions/${s.id}`, { coupon_id: couponId });
    list.reload();
  });
  const catalog = useCatalog();
  // Plan names for subscriptions made from a plan (docs/plans.md); every token reads plans.
  const plans = useAsync(() => api.get<ListPage<Plan>>('/v1/plans', { per_page: 100 }), []);
  // What a customer may do itself (the operator's portal settings): the console offers only that. The rule is the
  // API's (services/domain/subscriptions/terms-owner.ts), which refuses anything else with a 403 regardless.
  const settings = useAsync(
    (): Promise<PortalSettings | null> =>
      isAdmin ? Promise.resolve(null) : api.get<PortalSettings>('/v1/portal_settings'),
    [isAdmin],
  );
  const mayCancel = (s: Subscription) =>
    isAdmin ||
    (s.managed_by === 'operator'
      ? settings.data?.customer_can_cancel === true
      : settings.data?.self_serve_subscriptions === true);
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
          <>
            {isAdmin && customers.data && (
              <CustomerSelect
                customers={customers.data.list}
                value={customer}
                none="every customer"
                onChange={(c) => {
                  setCustomer(c);
                  setPage(1);
                }}
              />
            )}
            <StatusFilter
              value={status}
              statuses={['active', 'canceled']}
              onChange={(s) => {
                setStatus(s);
                setPage(1);
              }}
            />
          </>
        }
      >
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={catalog.error} />
        <ErrorBox error={cancel.error} />
        <ErrorBox error={setCoupon.error} />
        {list.data?.data.length === 0 && <Empty>No subscriptions yet.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="subscriptions">
            <thead>
              <tr>
                <th>subscription</th>
                {isAdmin && <th>customer</th>}
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
                  {isAdmin && (
                    <td data-testid="customer">
                      <a href={`#/customers/${s.customer_id}`}>
                        {customers.data?.label(s.customer_id) ?? s.customer_id}
                      </a>
                    </td>
                  )}
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
                    {isAdmin && s.status === 'active' && (
                      <CouponControl
                        subscription={s}
                        coupons={coupons.data ?? []}
                        busy={setCoupon.busy}
                        onSet={(id) => void setCoupon.run(s, id)}
                      />
                    )}
                  </td>
                  <td class="actions">
                    <a class="button" href={`#/invoices/upcoming/${s.id}`}>
                      Upcoming invoice
                    </a>
                    {canWrite && s.status === 'active' && mayCancel(s) && (
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
      {canWrite && catalog.data && (isAdmin || settings.data?.self_serve_subscriptions) && (
        <CreateSubscription
          products={catalog.data.products}
          meters={catalog.data.meters}
          plans={plans.data?.data ?? []}
          customers={isAdmin ? customers.data?.list : undefined}
          onCreated={list.reload}
        />
      )}
    </>
  );
}

/** Operators: apply a coupon to a subscription from the current period on, or remove the one it has. */
function CouponControl({
  subscription: s,
  coupons,
  busy,
  onSet,
}: {
  subscription: Subscription;
  coupons: Coupon[];
  busy: boolean;
  onSet: (couponId: string | null) => void;
}) {
  if (s.discount)
    return (
      <div>
        <button type="button" class="link" disabled={busy} onClick={() => onSet(null)}>
          Remove coupon
        </button>
      </div>
    );
  if (!coupons.length) return null;
  return (
    <form
      class="inline"
      aria-label="apply a coupon"
      onSubmit={(e) => {
        const id = formValues(e).coupon_id;
        if (id) onSet(id);
      }}
    >
      <select name="coupon_id" aria-label="coupon">
        {coupons.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
          </option>
        ))}
      </select>
      <button type="submit" disabled={busy}>
        Apply
      </button>
    </form>
  );
}

/**
 * Subscribe: a customer to products (its own, or for an operator the customer chosen) or — operators — to a plan.
 * `customers` undefined: the signed-in customer subscribes itself.
 */
function CreateSubscription({
  products,
  meters,
  plans,
  customers,
  onCreated,
}: {
  products: Product[];
  meters: Meter[];
  plans: Plan[];
  customers: Customer[] | undefined;
  onCreated: () => void;
}) {
  const { api } = useApp();
  const [chosen, setChosen] = useState<Record<string, string>>({}); // product id → meter id ('' for flat)
  const [customer, setCustomer] = useState('');
  const [plan, setPlan] = useState('');
  // An operator names the customer; none chosen: its own account, as a customer subscribes itself.
  const forCustomer = customer ? { customer_id: customer } : {};
  const create = useAction(async () => {
    await api.post('/v1/subscriptions', {
      ...forCustomer,
      ...(plan
        ? { plan_id: plan }
        : {
            items: Object.entries(chosen).map(([product_id, meter_id]) =>
              meter_id ? { product_id, meter_id } : { product_id },
            ),
          }),
    });
    setChosen({});
    setPlan('');
    onCreated();
  });
  // Only the latest version of each plan is offered (subscribing names the plan; the latest is the default).
  const latest = [...new Map(plans.map((p) => [p.id, p])).values()];
  if (!products.length)
    return (
      <Panel title="Subscribe">
        <Empty>The catalog has no products yet.</Empty>
      </Panel>
    );
  return (
    <Panel title="Subscribe">
      <form
        aria-label="subscribe"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        {customers && (
          <p>
            <CustomerSelect
              customers={customers}
              value={customer}
              none="this account (yourself)"
              onChange={setCustomer}
            />{' '}
            {latest.length > 0 && (
              <label>
                Plan{' '}
                <select
                  name="plan"
                  value={plan}
                  onChange={(e) => setPlan((e.currentTarget as HTMLSelectElement).value)}
                >
                  <option value="">none: the products below</option>
                  {latest.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name} ({p.currency})
                    </option>
                  ))}
                </select>
              </label>
            )}
          </p>
        )}
        {!plan && (
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
        )}
        <button type="submit" disabled={create.busy || (!plan && Object.keys(chosen).length === 0)}>
          Create subscription
        </button>
      </form>
      <ErrorBox error={create.error} />
    </Panel>
  );
}
