import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, Pager, Panel, StatusFilter } from '../ui/components.js';
import { formatMoney, formatNumber, formatPeriod, formatTime } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { Invoice, Subscription } from '../lib/types.js';

export function InvoicesPage() {
  const { api, navigate } = useApp();
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const list = useAsync(
    () => api.get<ListPage<Invoice>>('/v1/billing/invoices', { status, page, per_page: 20 }),
    [status, page],
  );
  const subs = useAsync(
    () => api.get<ListPage<Subscription>>('/v1/subscriptions', { status: 'active', per_page: 100 }),
    [],
  );
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
          <StatusFilter
            value={status}
            statuses={['open', 'paid', 'uncollectible', 'void']}
            onChange={(s) => {
              setStatus(s);
              setPage(1);
            }}
          />
        }
      >
        <ErrorBox error={list.error} onRetry={list.reload} />
        {list.data?.data.length === 0 && <Empty>No invoices yet: one is written when a billing period closes.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="invoices">
            <thead>
              <tr>
                <th>invoice</th>
                <th>period</th>
                <th>status</th>
                <th class="num">amount</th>
                <th>issued</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((inv) => (
                <tr key={inv.id}>
                  <td>
                    <a href={`#/invoices/${inv.id}`}>{inv.id}</a>
                  </td>
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
  const { api, canWrite } = useApp();
  const invoice = useAsync(() => api.get<Invoice>(`/v1/billing/invoices/${id}`), [id]);
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
  return (
    <Panel
      title={`Invoice ${id}`}
      actions={
        inv && (
          <>
            <button type="button" onClick={() => void download.run()} disabled={download.busy}>
              Download PDF
            </button>
            {canWrite && (inv.status === 'open' || inv.status === 'uncollectible') && (
              <button type="button" class="primary" onClick={() => void pay.run()} disabled={pay.busy}>
                Pay now
              </button>
            )}
          </>
        )
      }
    >
      <p>
        <a href="#/invoices">← all invoices</a>
      </p>
      {inv && 'hosted_invoice_url' in inv && inv.hosted_invoice_url && (
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
      {paid?.status === 'paid' && (
        <div class="notice" role="status">
          Paid: {formatMoney(paid.amount, paid.currency)} charged to the default card.
        </div>
      )}
      {inv && <InvoiceBody invoice={inv} />}
    </Panel>
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

function InvoiceBody({ invoice: inv }: { invoice: Invoice }) {
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
        <dd>
          <code>{inv.customer_id}</code>
        </dd>
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
