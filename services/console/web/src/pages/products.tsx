import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { formatMoney, formatTime } from '../lib/format.js';
import { withDecimal, type ListPage } from '../lib/api.js';
import type { Product } from '../lib/types.js';

/** The deployment's catalog: every user reads it; operators (admin scope) create, reprice and delete. */
export function ProductsPage() {
  const { api, isAdmin } = useApp();
  const [page, setPage] = useState(1);
  const list = useAsync(() => api.get<ListPage<Product>>('/v1/products', { page, per_page: 20 }), [page]);
  const remove = useAction(async (p: Product) => {
    await api.delete(`/v1/products/${p.id}`);
    list.reload();
  });
  const reprice = useAction(async (p: Product, price: string) => {
    await api.patch(`/v1/products/${p.id}`, withDecimal({}, 'price', price));
    list.reload();
  });
  return (
    <>
      <Panel title="Products">
        {!isAdmin && <p class="hint">Only operators can change the catalog.</p>}
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={remove.error} />
        <ErrorBox error={reprice.error} />
        {list.data?.data.length === 0 && <Empty>The catalog is empty.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="products">
            <thead>
              <tr>
                <th>product</th>
                <th>pricing</th>
                <th class="num">price</th>
                <th>updated</th>
                {isAdmin && <th />}
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((p) => (
                <tr key={p.id}>
                  <td>
                    {p.name}
                    <div class="id">{p.id}</div>
                  </td>
                  <td>{p.pricing}</td>
                  <td class="num">
                    {formatMoney(p.price, p.currency)}
                    {p.pricing === 'metered' ? ' / unit' : ' / month'}
                  </td>
                  <td>{formatTime(p.updated_at)}</td>
                  {isAdmin && (
                    <td class="actions">
                      <form class="inline" onSubmit={(e) => void reprice.run(p, formValues(e).price!)}>
                        <input
                          name="price"
                          type="text"
                          inputMode="decimal"
                          size={10}
                          placeholder="new price"
                          required
                        />
                        <button type="submit" disabled={reprice.busy}>
                          Reprice
                        </button>
                      </form>
                      <button type="button" class="danger" disabled={remove.busy} onClick={() => remove.run(p)}>
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
      {isAdmin && <CreateProduct onCreated={list.reload} />}
    </>
  );
}

function CreateProduct({ onCreated }: { onCreated: () => void }) {
  const { api } = useApp();
  const create = useAction(async (v: Record<string, string>) => {
    await api.post(
      '/v1/products',
      withDecimal({ name: v.name, currency: v.currency, pricing: v.pricing }, 'price', v.price!),
    );
    onCreated();
  });
  return (
    <Panel title="Create a product">
      <form
        class="grid"
        onSubmit={(e) => {
          const form = e.currentTarget as HTMLFormElement;
          void create.run(formValues(e)).then((ok) => ok && form.reset());
        }}
      >
        <label>
          Name <input name="name" required placeholder="API calls" />
        </label>
        <label>
          Price <input name="price" inputMode="decimal" required placeholder="0.001" />
        </label>
        <label>
          Currency <input name="currency" required defaultValue="USD" size={4} />
        </label>
        <label>
          Pricing
          <select name="pricing">
            <option value="flat">flat (per month)</option>
            <option value="metered">metered (per unit)</option>
          </select>
        </label>
        <button type="submit" disabled={create.busy}>
          Create product
        </button>
      </form>
      <ErrorBox error={create.error} />
    </Panel>
  );
}
