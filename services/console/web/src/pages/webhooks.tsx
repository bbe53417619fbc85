import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, Pager, Panel } from '../ui/components.js';
import { formatTime } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import { WEBHOOK_EVENTS, type Delivery, type Webhook } from '../lib/types.js';

export function WebhooksPage() {
  const { api, canWrite } = useApp();
  const [page, setPage] = useState(1);
  const list = useAsync(() => api.get<ListPage<Webhook>>('/v1/webhooks', { page, per_page: 20 }), [page]);
  const [created, setCreated] = useState<Webhook | undefined>(undefined);
  // A new key after each creation mounts an empty form: the next webhook starts from the defaults.
  const [formKey, setFormKey] = useState(0);
  return (
    <>
      <Panel title="Webhooks">
        <ErrorBox error={list.error} onRetry={list.reload} />
        {created && (
          <div class="notice" role="status">
            Webhook <a href={`#/webhooks/${created.id}`}>{created.id}</a> created.
            {created.secret && (
              <>
                {' '}
                Its signing secret is shown only now: <code data-testid="webhook-secret">{created.secret}</code>
              </>
            )}
          </div>
        )}
        {list.data?.data.length === 0 && <Empty>No webhooks yet.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="webhooks">
            <thead>
              <tr>
                <th>endpoint</th>
                <th>events</th>
                <th>status</th>
                <th>updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((w) => (
                <tr key={w.id}>
                  <td>
                    <a href={`#/webhooks/${w.id}`}>{w.url}</a>
                    <div class="id">{w.id}</div>
                  </td>
                  <td>{w.events.join(', ')}</td>
                  <td>
                    <Badge value={w.status} />
                  </td>
                  <td>{formatTime(w.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
      {canWrite && (
        <Panel title="Add a webhook">
          <WebhookForm
            key={formKey}
            submitLabel="Create webhook"
            onSubmit={async (body) => {
              setCreated(await api.post<Webhook>('/v1/webhooks', body));
              setFormKey((k) => k + 1);
              list.reload();
            }}
          />
        </Panel>
      )}
    </>
  );
}

interface WebhookInput {
  url: string;
  events: string[];
  status?: Webhook['status'];
  secret?: string;
}

function WebhookForm({
  initial,
  submitLabel,
  onSubmit,
}: {
  initial?: Webhook;
  submitLabel: string;
  onSubmit: (body: WebhookInput) => Promise<void>;
}) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [events, setEvents] = useState<string[]>(
    initial?.events ?? ['invoice.created', 'invoice.paid', 'payment.failed'],
  );
  const [status, setStatus] = useState<Webhook['status']>(initial?.status ?? 'enabled');
  const [secret, setSecret] = useState('');
  const save = useAction(async () => {
    await onSubmit({ url, events, ...(initial ? { status } : {}), ...(secret ? { secret } : {}) });
    setSecret('');
  });
  return (
    <form
      class="grid"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <label class="wide">
        URL{' '}
        <input
          name="url"
          type="url"
          required
          value={url}
          onInput={(e) => setUrl((e.currentTarget as HTMLInputElement).value)}
          placeholder="https://example.com/hooks/meterline"
        />
      </label>
      <fieldset class="wide">
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((ev) => (
          <label key={ev} class="check">
            <input
              type="checkbox"
              name="events"
              value={ev}
              checked={events.includes(ev)}
              onChange={(e) =>
                setEvents(
                  (e.currentTarget as HTMLInputElement).checked ? [...events, ev] : events.filter((x) => x !== ev),
                )
              }
            />{' '}
            {ev}
          </label>
        ))}
      </fieldset>
      {initial && (
        <label>
          Status
          <select
            name="status"
            value={status}
            onChange={(e) => setStatus((e.currentTarget as HTMLSelectElement).value as Webhook['status'])}
          >
            <option value="enabled">enabled</option>
            <option value="disabled">disabled</option>
          </select>
        </label>
      )}
      <label>
        {initial ? 'New secret (optional)' : 'Secret (optional, 16–256 characters; generated if empty)'}
        <input
          name="secret"
          type="password"
          autocomplete="off"
          value={secret}
          onInput={(e) => setSecret((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" disabled={save.busy}>
        {submitLabel}
      </button>
      <div class="wide">
        <ErrorBox error={save.error} />
      </div>
    </form>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const { api, canWrite, navigate } = useApp();
  const webhook = useAsync(() => api.get<Webhook>(`/v1/webhooks/${id}`), [id]);
  const [page, setPage] = useState(1);
  const deliveries = useAsync(
    () => api.get<ListPage<Delivery>>(`/v1/webhooks/${id}/deliveries`, { page, per_page: 20 }),
    [id, page],
  );
  const [retried, setRetried] = useState<string | undefined>(undefined);
  const retry = useAction(async (d: Delivery) => {
    await api.post(`/v1/webhooks/${id}/deliveries/${d.id}/retry`);
    setRetried(d.id);
    deliveries.reload();
  });
  const remove = useAction(async () => {
    await api.delete(`/v1/webhooks/${id}`);
    navigate('/webhooks');
  });
  const w = webhook.data;
  return (
    <>
      <Panel
        title={w ? `Webhook ${w.url}` : `Webhook ${id}`}
        actions={
          canWrite &&
          w && (
            <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run()}>
              Delete
            </button>
          )
        }
      >
        <p>
          <a href="#/webhooks">← all webhooks</a>
        </p>
        <ErrorBox error={webhook.error} onRetry={webhook.reload} />
        <ErrorBox error={remove.error} />
        {w && (
          <dl class="facts">
            <dt>id</dt>
            <dd>
              <code>{w.id}</code>
            </dd>
            <dt>status</dt>
            <dd>
              <Badge value={w.status} />
            </dd>
            <dt>events</dt>
            <dd>{w.events.join(', ')}</dd>
          </dl>
        )}
        {w && canWrite && (
          <WebhookForm
            key={w.updated_at}
            initial={w}
            submitLabel="Save changes"
            onSubmit={async (body) => {
              await api.patch(`/v1/webhooks/${id}`, body);
              webhook.reload();
            }}
          />
        )}
      </Panel>
      <Panel
        title="Delivery log"
        actions={
          <button type="button" onClick={deliveries.reload}>
            Refresh
          </button>
        }
      >
        <ErrorBox error={deliveries.error} onRetry={deliveries.reload} />
        <ErrorBox error={retry.error} />
        {retried && (
          <div class="notice" role="status">
            Delivery {retried} sent again: the new attempt appears in the log.
          </div>
        )}
        {deliveries.data?.data.length === 0 && <Empty>No deliveries yet.</Empty>}
        {!!deliveries.data?.data.length && (
          <table class="list" data-testid="deliveries">
            <thead>
              <tr>
                <th>event</th>
                <th>attempt</th>
                <th>status</th>
                <th>response</th>
                <th class="num">time</th>
                <th>sent</th>
                <th>next attempt</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((d) => (
                <tr key={d.id} data-delivery-id={d.id} data-status={d.status}>
                  <td>
                    {d.event_type}
                    <div class="id">{d.event_id}</div>
                  </td>
                  <td class="num">{d.attempt}</td>
                  <td>
                    <Badge value={d.status} />
                  </td>
                  <td>
                    {d.response_status ?? ''} {d.error && <span class="bad">{d.error}</span>}
                  </td>
                  <td class="num">{d.duration_ms == null ? '—' : `${d.duration_ms} ms`}</td>
                  <td>{d.attempted_at ? formatTime(d.attempted_at) : 'not yet'}</td>
                  <td>{formatTime(d.next_attempt_at)}</td>
                  <td class="actions">
                    {canWrite && d.status === 'failed' && (
                      <button type="button" disabled={retry.busy} onClick={() => void retry.run(d)}>
                        Retry
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={deliveries.data?.pagination} onPage={setPage} />
      </Panel>
    </>
  );
}
