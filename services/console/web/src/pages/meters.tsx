import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, formValues, Pager, Panel, StatusFilter } from '../ui/components.js';
import { UsageChart } from '../ui/usage-chart.js';
import { formatTime, meterLabel } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { Meter } from '../lib/types.js';
// What the API accepts per meter type: the very table it validates with.
import { AGGREGATIONS } from '../../../../../shared/meters/record.js';

export function MetersPage() {
  const { api, canWrite, isAdmin, navigate } = useApp();
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const list = useAsync(() => api.get<ListPage<Meter>>('/v1/meters', { status, page, per_page: 20 }), [status, page]);
  const toggle = useAction(async (m: Meter) => {
    await api.patch(`/v1/meters/${m.id}`, { status: m.status === 'active' ? 'inactive' : 'active' });
    list.reload();
  });
  return (
    <>
      <Panel
        title="Meters"
        actions={
          <StatusFilter
            value={status}
            statuses={['active', 'inactive']}
            onChange={(s) => {
              setStatus(s);
              setPage(1);
            }}
          />
        }
      >
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={toggle.error} />
        {list.data && list.data.data.length === 0 && (
          <Empty>No meters{status ? ` with status ${status}` : ''} yet.</Empty>
        )}
        {list.data && list.data.data.length > 0 && (
          <table class="list" data-testid="meters">
            <thead>
              <tr>
                <th>name</th>
                <th>unit</th>
                <th>type · aggregation</th>
                <th>status</th>
                <th>created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((m) => (
                <tr key={m.id} data-meter-id={m.id}>
                  <td>
                    <a href={`#/meters/${m.id}`}>{meterLabel(m, list.data!.data)}</a>
                    <div class="id">{m.id}</div>
                  </td>
                  <td>{m.unit}</td>
                  <td>
                    {m.type} · {m.aggregation}
                    {m.unique_by ? ` of ${m.unique_by}` : ''}
                  </td>
                  <td>
                    <Badge value={m.status} />
                  </td>
                  <td>{formatTime(m.created_at)}</td>
                  <td class="actions">
                    {mayChangeMeter(m, canWrite, isAdmin) && (
                      <button type="button" disabled={toggle.busy} onClick={() => toggle.run(m)}>
                        {m.status === 'active' ? 'Deactivate' : 'Activate'}
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
      {canWrite && <CreateMeter onCreated={(m) => navigate(`/meters/${m.id}`)} />}
    </>
  );
}

function CreateMeter({ onCreated }: { onCreated: (m: Meter) => void }) {
  const { api } = useApp();
  const [type, setType] = useState<Meter['type']>('counter');
  const [aggregation, setAggregation] = useState('sum');
  const create = useAction(async (v: Record<string, string>) =>
    onCreated(
      await api.typed((client) =>
        client.createMeter({
          name: v.name!,
          unit: v.unit!,
          type: v.type as Meter['type'],
          aggregation: v.aggregation!,
          ...(v.aggregation === 'unique_count' ? { unique_by: v.unique_by!.trim() } : {}),
          ...(v.key?.trim() ? { key: v.key.trim() } : {}),
        }),
      ),
    ),
  );
  return (
    <Panel title="Create a meter">
      <form class="grid" onSubmit={(e) => void create.run(formValues(e))}>
        <label>
          Name <input name="name" required placeholder="API requests" />
        </label>
        <label>
          Unit <input name="unit" required placeholder="requests" />
        </label>
        <label>
          Key (optional; emitters may send it instead of the id){' '}
          <input name="key" placeholder="api_requests" pattern="[a-z][a-z0-9_\-]{0,63}" />
        </label>
        <label>
          Type
          <select
            name="type"
            value={type}
            onChange={(e) => {
              const next = (e.currentTarget as HTMLSelectElement).value as Meter['type'];
              setType(next);
              setAggregation(AGGREGATIONS[next][0]!);
            }}
          >
            {Object.keys(AGGREGATIONS).map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Aggregation
          <select
            name="aggregation"
            value={aggregation}
            onChange={(e) => setAggregation((e.currentTarget as HTMLSelectElement).value)}
          >
            {AGGREGATIONS[type].map((a) => (
              <option key={a} value={a}>
                {a === 'unique_count' ? 'unique_count (distinct values of a dimension)' : a}
              </option>
            ))}
          </select>
        </label>
        {aggregation === 'unique_count' && (
          <label>
            Dimension counted <input name="unique_by" required placeholder="user_id" pattern="[a-z0-9_]{1,64}" />
          </label>
        )}
        <button type="submit" disabled={create.busy}>
          Create meter
        </button>
      </form>
      <ErrorBox error={create.error} />
    </Panel>
  );
}

export function MeterPage({ id }: { id: string }) {
  const { api, canWrite, isAdmin } = useApp();
  const meter = useAsync((): Promise<Meter> => api.typed((client) => client.getMeter(id)), [id]);
  const toggle = useAction(async (m: Meter) => {
    await api.patch(`/v1/meters/${m.id}`, { status: m.status === 'active' ? 'inactive' : 'active' });
    meter.reload();
  });
  const m = meter.data;
  return (
    <Panel
      title={m ? `Meter: ${m.name}` : 'Meter'}
      actions={
        m &&
        mayChangeMeter(m, canWrite, isAdmin) && (
          <button type="button" disabled={toggle.busy} onClick={() => toggle.run(m)}>
            {m.status === 'active' ? 'Deactivate' : 'Activate'}
          </button>
        )
      }
    >
      <p>
        <a href="#/meters">← all meters</a>
      </p>
      <ErrorBox error={meter.error} onRetry={meter.reload} />
      <ErrorBox error={toggle.error} />
      {m && (
        <>
          <dl class="facts">
            <dt>id</dt>
            <dd>
              <code>{m.id}</code>
            </dd>
            {m.key && (
              <>
                <dt>key</dt>
                <dd>
                  <code>{m.key}</code>
                </dd>
              </>
            )}
            <dt>status</dt>
            <dd>
              <Badge value={m.status} />
            </dd>
            <dt>type</dt>
            <dd>
              {m.type} · {m.aggregation}
            </dd>
            <dt>unit</dt>
            <dd>{m.unit}</dd>
            {m.unique_by && (
              <>
                <dt>counts distinct</dt>
                <dd>
                  <code>{m.unique_by}</code>
                </dd>
              </>
            )}
          </dl>
          <UsageChart meter={m} />
        </>
      )}
    </Panel>
  );
}

/** A deployment meter is the operator's: only an admin token changes it (the API answers 403 to anyone else). */
function mayChangeMeter(m: Meter, canWrite: boolean, isAdmin: boolean): boolean {
  return canWrite && (m.scope !== 'deployment' || isAdmin);
}
