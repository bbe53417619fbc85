import { useState } from 'preact/hooks';
import type Type from 'typebox';
import type { AuditEventSchema } from '../../../../../shared/api/audit.js';
import { useApp } from '../ui/app-context.js';
import { useAsync } from '../ui/hooks.js';
import { Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { formatTime } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';

type AuditEvent = Type.Static<typeof AuditEventSchema>;

/** Who acted, in a few words: the user (or client), the CLI's user@host, or the address of a public call. */
function actorText(a: AuditEvent['actor']): string {
  if (a.type === 'cli') return `CLI ${a.name ?? ''}`.trim();
  if (a.type === 'public') return `public ${a.address ?? ''}`.trim();
  return `${a.user_id ?? a.client_id ?? 'token'}${a.role ? ` (${a.role})` : ''}`;
}

/** The fields an update changed, before → after (secrets show as redacted). */
function changes(e: AuditEvent): string {
  if (e.action !== 'update' || !e.before || !e.after) return '';
  const before = e.before as Record<string, unknown>;
  const after = e.after as Record<string, unknown>;
  return Object.keys(after)
    .filter((k) => k !== 'updated_at' && JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => `${k}: ${JSON.stringify(before[k])} → ${JSON.stringify(after[k])}`)
    .join('; ');
}

/** The audit log (docs/audit.md): every change made through the API or the CLI, newest first, filtered exactly. */
export function AuditPage() {
  const { api } = useApp();
  const [page, setPage] = useState(1);
  const [filter, setFilter] = useState<Record<string, string>>({});
  const list = useAsync(
    () => api.get<ListPage<AuditEvent>>('/v1/audit_events', { ...filter, page, per_page: 25 }),
    [page, JSON.stringify(filter)],
  );
  const apply = (e: Event) => {
    const v = formValues(e);
    const next: Record<string, string> = {};
    for (const k of ['resource', 'actor']) if (v[k]?.trim()) next[k] = v[k]!.trim();
    for (const k of ['from', 'to']) if (v[k]?.trim()) next[k] = new Date(v[k]!).toISOString();
    setPage(1);
    setFilter(next);
  };
  return (
    <Panel title="Audit log">
      <form class="inline" onSubmit={apply} data-testid="audit-filter">
        <label>
          resource id <input name="resource" placeholder="prod_…" />
        </label>
        <label>
          actor <input name="actor" placeholder="usr_… or cli_…" />
        </label>
        <label>
          from <input name="from" type="datetime-local" />
        </label>
        <label>
          to <input name="to" type="datetime-local" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={list.error} onRetry={list.reload} />
      {list.data?.data.length === 0 && <Empty>No changes match.</Empty>}
      {!!list.data?.data.length && (
        <table class="list" data-testid="audit-events">
          <thead>
            <tr>
              <th>when</th>
              <th>resource</th>
              <th>action</th>
              <th>actor</th>
              <th>operation</th>
              <th>changes</th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((e) => (
              <tr key={e.id} data-audit-id={e.id}>
                <td>{formatTime(e.occurred_at)}</td>
                <td>
                  {e.resource_type}
                  <div class="id">{e.resource_id}</div>
                </td>
                <td>{e.action}</td>
                <td>
                  {actorText(e.actor)}
                  {e.actor.address && <div class="id">{e.actor.address}</div>}
                </td>
                <td>
                  <code>{e.operation}</code>
                  {e.request_id && <div class="id">{e.request_id}</div>}
                </td>
                <td class="hint">{changes(e)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager page={list.data?.pagination} onPage={setPage} />
    </Panel>
  );
}
