import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, formValues, Pager, Panel, StatusFilter } from '../ui/components.js';
import { CustomerSelect, useCustomers } from '../ui/customers.js';
import { withDecimal } from '../lib/api.js';
import { formatMoney, formatNumber, formatPeriod, formatTime } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { Invoice, Subscription } from '../lib/types.js';

/**
 * Invoices: a customer's own; an operator's, every customer's (scope=deployment), filtered by customer, status and
 * the period they bill.
 */
export function InvoicesPage() {
  const { api, navigate, isAdmin } = useApp();
  const [status, setStatus] = useState('');
  const [customer, setCustomer] = useState('');
  const [period, setPeriod] = useState({ from: '', to: '' });
  const [page, setPage] = useState(1);
  const customers = useCustomers();
  const scope = isAdmin ? 'deployment' : undefined;
  const list = useAsync(
    () =>
      api.get<ListPage<Invoice>>('/v1/billing/invoices', {
        status,
        scope,
        customer_id: customer || undefined,
        period_from: period.from || undefined,
        period_to: period.to || undefined,
        page,
        per_page: 20,
      }),
    [status, customer, period, page],
  );
  const subs = useAsync(
    () => api.get<ListPage<Subscription>>('/v1/subscriptions', { status: 'active', scope, per_page: 100 }),
    [],
  );
  const filtered = !!(status || customer || period.from || period.to);
  return (
    <>
      <Panel title="Upcoming invoices">
        <ErrorBox error={subs.error} onRetry={subs.reload} />
        {subs.data?.data.length === 0 && <Empty>No active subscription: nothing will be invoiced.</Empty>}
        {!!subs.data?.data.length && (
          <form class="inline" onSubmit={(e) => e.preventDefault()}>
            <label>
              Subscription{' '}
              <select
                name="subscription"
                onChange={(e) => navigate(`/invoices/upcoming/${(e.currentTarget as HTMLSelectElement).value}`)}
              >
                <option value="">choose…</option>
                {subs.data.data.map((s) => (
                  <option key={s.id} value={s.id}>
                    {isAdmin ? `${customers.data?.label(s.customer_id) ?? s.customer_id} · ` : ''}
                    {s.id} ({s.currency}, {formatPeriod(s.current_period_start, s.current_period_end)})
                  </option>
                ))}
              </select>
            </label>
          </form>
        )}
      </Panel>
      <Panel
        title="Invoices"
        actions={
          <form
            class="inline"
            aria-label="filter invoices"
            onSubmit={(e) => {
              const v = formValues(e);
              setPeriod({ from: v.period_from ?? '', to: v.period_to ?? '' });
              setPage(1);
            }}
          >
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
              statuses={['draft', 'open', 'paid', 'uncollectible', 'void']}
              onChange={(s) => {
                setStatus(s);
                setPage(1);
              }}
            />
            <label>
              Period from <input type="date" name="period_from" defaultValue={period.from} />
            </label>
            <label>
              to <input type="date" name="period_to" defaultValue={period.to} />
            </label>
            <button type="submit">Filter</button>
          </form>
        }
      >
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={customers.error} />
        {list.data?.data.length === 0 && (
          <Empty>
            {filtered
              ? 'No invoice matches these filters.'
              : 'No invoices yet: one is written when a billing period closes.'}
          </Empty>
        )}
        {!!list.data?.data.length && (
          <table class="list" data-testid="invoices">
            <thead>
              <tr>
                <th>invoice</th>
                {isAdmin && <th>customer</th>}
                <th>period</th>
                <th>status</th>
                <th class="num">amount</th>
                <th>issued</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((inv) => (
                <tr key={inv.id} data-invoice-id={inv.id}>
                  <td>
                    <a href={`#/invoices/${inv.id}`}>{inv.id}</a>
                    {inv.number && <div class="id">no. {inv.number}</div>}
                  </td>
                  {isAdmin && (
                    <td data-testid="customer">{customers.data?.label(inv.customer_id) ?? inv.customer_id}</td>
                  )}
                  <td>{formatPeriod(inv.period_start, inv.period_end)}</td>
                  <td>
                    <Badge value={inv.status} />
                  </td>
                  <td class="num">{formatMoney(inv.amount, inv.currency)}</td>
                  <td>{formatTime(inv.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
    </>
  );
}

/** Saves bytes the API sent as a file, through a temporary blob: link (the API needs the bearer token). */
function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function InvoicePage({ id }: { id: string }) {
  const { api, canWrite, isAdmin } = useApp();
  const invoice = useAsync(() => api.get<Invoice>(`/v1/billing/invoices/${id}`), [id]);
  const customers = useCustomers();
  const voided = useAction(async () => {
    if (!confirm('Void this invoice? It will no longer be owed.')) return;
    await api.post(`/v1/billing/invoices/${id}/void`);
    invoice.reload();
  });
  const [credited, setCredited] = useState<string | null>(null);
  const credit = useAction(async (v: Record<string, string>) => {
    const inv = invoice.data!;
    const note = await api.post<{ id: string; number?: string | null; amount: number }>(
      `/v1/billing/invoices/${id}/credit-notes`,
      withDecimal({ reason: v.reason }, 'amount', v.amount ?? ''),
    );
    setCredited(`Credit note ${note.number ?? note.id} of ${formatMoney(note.amount, inv.currency)} issued.`);
    invoice.reload();
  });
  const download = useAction(async () => {
    const file = await api.download(`/v1/billing/invoices/${id}/download`);
    saveBlob(file.blob, file.filename ?? `${id}.pdf`);
  });
  const [paid, setPaid] = useState<Invoice | undefined>(undefined);
  const pay = useAction(async () => {
    try {
      setPaid(await api.post<Invoice>(`/v1/billing/invoices/${id}/pay`));
    } finally {
      invoice.reload(); // a declined attempt still counts: show the new attempt_count
    }
  });
  const inv = invoice.data;
  const owed = inv && (inv.status === 'open' || inv.status === 'uncollectible');
  return (
    <>
      <Panel
        title={`Invoice ${inv?.number ?? id}`}
        actions={
          inv && (
            <>
              <button type="button" onClick={() => void download.run()} disabled={download.busy}>
                Download PDF
              </button>
              {canWrite && owed && (
                <button type="button" class="primary" onClick={() => void pay.run()} disabled={pay.busy}>
                  Pay now
                </button>
              )}
              {isAdmin && (owed || inv.status === 'draft') && (
                <button type="button" onClick={() => void voided.run()} disabled={voided.busy}>
                  Void
                </button>
              )}
            </>
          )
        }
      >
        <p>
          <a href="#/invoices">← all invoices</a>
        </p>
        {inv?.hosted_invoice_url && (
          <p>
            <a href={inv.hosted_invoice_url} target="_blank" rel="noopener noreferrer" id="hosted-invoice-link">
              Hosted invoice page
            </a>{' '}
            (what the customer sees and pays on; no sign-in)
          </p>
        )}
        <ErrorBox error={invoice.error} onRetry={invoice.reload} />
        <ErrorBox error={download.error} />
        <ErrorBox error={pay.error} />
        <ErrorBox error={voided.error} />
        {paid?.status === 'paid' && (
          <div class="notice" role="status">
            Paid: {formatMoney(paid.amount, paid.currency)} charged to the default card.
          </div>
        )}
        {inv && <InvoiceBody invoice={inv} customer={isAdmin ? customers.data?.label(inv.customer_id) : undefined} />}
      </Panel>
      {isAdmin && inv && (inv.status === 'open' || inv.status === 'paid') && (
        <Panel title="Credit note">
          <form class="grid" aria-label="credit note" onSubmit={(e) => void credit.run(formValues(e))}>
            <label>
              Amount ({inv.currency}) <input name="amount" required inputMode="decimal" placeholder="10.00" />
            </label>
            <label class="wide">
              Reason <input name="reason" required placeholder="Outage on 12 October" />
            </label>
            <button type="submit" disabled={credit.busy}>
              Issue credit note
            </button>
          </form>
          <ErrorBox error={credit.error} />
          {credited && (
            <div class="notice" role="status">
              {credited}
            </div>
          )}
        </Panel>
      )}
    </>
  );
}

export function UpcomingInvoicePage({ subscriptionId }: { subscriptionId: string }) {
  const { api } = useApp();
  const upcoming = useAsync(
    () => api.get<Invoice>('/v1/billing/invoices/upcoming', { subscription_id: subscriptionId }),
    [subscriptionId],
  );
  return (
    <Panel
      title={`Upcoming invoice of ${subscriptionId}`}
      actions={
        <button type="button" onClick={upcoming.reload}>
          Refresh
        </button>
      }
    >
      <p>
        <a href="#/invoices">← all invoices</a> · what the current period would be invoiced if it closed now (nothing is
        stored)
      </p>
      <ErrorBox error={upcoming.error} onRetry={upcoming.reload} />
      {upcoming.data && <InvoiceBody invoice={upcoming.data} />}
    </Panel>
  );
}

/** The last failed attempt, whether the API sends it as text or as {code, message}. */
function paymentError(e: unknown): string {
  if (typeof e === 'string') return e;
  const o = e as { message?: string; code?: string; failure_code?: string };
  return o.message ?? o.failure_code ?? o.code ?? JSON.stringify(e);
}

function InvoiceBody({ invoice: inv, customer }: { invoice: Invoice; customer?: string }) {
  return (
    <>
      <dl class="facts">
        <dt>status</dt>
        <dd>
          <Badge value={inv.status} />
        </dd>
        <dt>period</dt>
        <dd>{formatPeriod(inv.period_start, inv.period_end)}</dd>
        <dt>subscription</dt>
        <dd>
          <code>{inv.subscription_id}</code>
        </dd>
        <dt>customer</dt>
        <dd data-testid="invoice-customer">{customer ?? <code>{inv.customer_id}</code>}</dd>
        {inv.created_at && (
          <>
            <dt>{inv.status === 'draft' ? 'computed' : 'issued'}</dt>
            <dd>{formatTime(inv.created_at)}</dd>
          </>
        )}
        {inv.paid_at && (
          <>
            <dt>paid</dt>
            <dd>{formatTime(inv.paid_at)}</dd>
          </>
        )}
        {inv.status !== 'draft' && (
          <>
            <dt>payment attempts</dt>
            <dd>{inv.attempt_count}</dd>
          </>
        )}
        {inv.next_payment_attempt_at && (
          <>
            <dt>next attempt</dt>
            <dd>{formatTime(inv.next_payment_attempt_at)}</dd>
          </>
        )}
        {inv.last_payment_error && (
          <>
            <dt>last payment error</dt>
            <dd class="bad">{paymentError(inv.last_payment_error)}</dd>
          </>
        )}
      </dl>
      <table class="list" data-testid="invoice-lines">
        <thead>
          <tr>
            <th>description</th>
            <th class="num">quantity</th>
            <th class="num">unit price</th>
            <th class="num">amount</th>
          </tr>
        </thead>
        <tbody>
          {inv.lines.map((l, i) => (
            <tr key={i}>
              <td>
                {l.description}
                <div class="id">
                  {l.product_id}
                  {l.meter_id ? ` · ${l.meter_id}` : ''}
                </div>
              </td>
              <td class="num">{formatNumber(l.quantity)}</td>
              <td class="num">{formatMoney(l.unit_price, inv.currency)}</td>
              <td class="num">{formatMoney(l.amount, inv.currency)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th colSpan={3}>Total</th>
            <th class="num" data-testid="invoice-total">
              {formatMoney(inv.amount, inv.currency)}
            </th>
          </tr>
        </tfoot>
      </table>
    </>
  );
}
