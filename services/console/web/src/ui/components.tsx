import type { ComponentChildren } from 'preact';
import { describeError } from '../lib/problem.js';
import type { ListPage } from '../lib/api.js';

/** An API failure as the user reads it: the server's detail, the fields at fault, the request id. */
export function ErrorBox({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (error === undefined || error === null) return null;
  const view = describeError(error);
  // The detail already names a lone field's problem: list fields only when it says more.
  const fields = view.fields.length === 1 && view.message.includes(view.fields[0]!.message) ? [] : view.fields;
  return (
    <div class="error" role="alert">
      <strong>{view.message}</strong>
      {fields.length > 0 && (
        <ul>
          {fields.map((f) => (
            <li key={f.field + f.message}>
              {f.field && <code>{f.field}</code>} {f.message}
            </li>
          ))}
        </ul>
      )}
      {(view.code || view.requestId) && (
        <small>
          {view.code && (
            <>
              code <code>{view.code}</code>
            </>
          )}{' '}
          {view.requestId && (
            <>
              · request <code>{view.requestId}</code>
            </>
          )}
        </small>
      )}
      {onRetry && (
        <button type="button" class="link" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value}`}>{value}</span>;
}

export function Panel({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section class="panel">
      <header>
        <h2>{title}</h2>
        {actions && <div class="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function Pager({
  page,
  onPage,
}: {
  page: ListPage<unknown>['pagination'] | undefined;
  onPage: (n: number) => void;
}) {
  if (!page) return null;
  const pages = Math.max(1, Math.ceil(page.total / page.per_page));
  return (
    <nav class="pager" aria-label="pages">
      <button type="button" disabled={page.page <= 1} onClick={() => onPage(page.page - 1)}>
        ← Newer
      </button>
      <span>
        page {page.page} of {pages} · {page.total} in all
      </span>
      <button type="button" disabled={page.page >= pages} onClick={() => onPage(page.page + 1)}>
        Older →
      </button>
    </nav>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** The values of a submitted form, as strings. */
export function formValues(e: Event): Record<string, string> {
  e.preventDefault();
  const form = e.currentTarget as HTMLFormElement;
  const out: Record<string, string> = {};
  new FormData(form).forEach((v, k) => {
    if (typeof v === 'string') out[k] = v;
  });
  return out;
}

/** The "Status" filter of a list page: "all" plus the given statuses. */
export function StatusFilter({
  value,
  statuses,
  onChange,
}: {
  value: string;
  statuses: readonly string[];
  onChange: (status: string) => void;
}) {
  return (
    <label>
      Status{' '}
      <select name="status" value={value} onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value)}>
        <option value="">all</option>
        {statuses.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </label>
  );
}
