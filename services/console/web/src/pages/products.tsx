import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { formatTime, priceModelLines } from '../lib/format.js';
import { decimalText, exactJson, withDecimal, type DecimalText, type ListPage } from '../lib/api.js';
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
                  <td class="num" data-testid="price">
                    {priceModelLines(p).map((line) => (
                      <div key={line}>{line}</div>
                    ))}
                  </td>
                  <td>{formatTime(p.updated_at)}</td>
                  {isAdmin && (
                    <td class="actions">
                      {p.pricing !== 'tiered' && (
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
                      )}
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

interface TierInput {
  up_to: string;
  unit_price: string;
  flat_price: string;
}

const NEW_TIER: TierInput = { up_to: '', unit_price: '', flat_price: '' };

/** The body of POST /v1/products for the model chosen; every amount goes to the API digit for digit. */
function productBody(v: Record<string, string>, tiers: TierInput[]) {
  const base = { name: v.name, currency: v.currency, pricing: v.pricing };
  switch (v.pricing) {
    case 'tiered':
      return exactJson({
        ...base,
        tiers_mode: v.tiers_mode,
        tiers: tiers.map((tier, i) => {
          const out: Record<string, DecimalText | null> = {
            up_to: i === tiers.length - 1 ? null : decimalText(`tier ${i + 1} up to`, tier.up_to),
            unit_price: decimalText(`tier ${i + 1} unit price`, tier.unit_price),
          };
          if (tier.flat_price.trim()) out.flat_price = decimalText(`tier ${i + 1} flat fee`, tier.flat_price);
          return out;
        }),
      });
    case 'package':
      return exactJson({
        ...base,
        price: decimalText('price', v.price!),
        package_size: decimalText('units per package', v.package_size!),
      });
    default:
      return withDecimal(base, 'price', v.price!);
  }
}

function CreateProduct({ onCreated }: { onCreated: () => void }) {
  const { api } = useApp();
  const [pricing, setPricing] = useState<Product['pricing']>('flat');
  const [tiers, setTiers] = useState<TierInput[]>([{ ...NEW_TIER }, { ...NEW_TIER }]);
  const create = useAction(async (v: Record<string, string>) => {
    await api.post('/v1/products', productBody(v, tiers));
    onCreated();
  });
  const setTier = (i: number, patch: Partial<TierInput>) =>
    setTiers((all) => all.map((tier, k) => (k === i ? { ...tier, ...patch } : tier)));
  return (
    <Panel title="Create a product">
      <form
        class="grid"
        onSubmit={(e) => {
          const form = e.currentTarget as HTMLFormElement;
          void create.run(formValues(e)).then((ok) => {
            if (!ok) return;
            form.reset();
            setPricing('flat');
            setTiers([{ ...NEW_TIER }, { ...NEW_TIER }]);
          });
        }}
      >
        <label>
          Name <input name="name" required placeholder="API calls" />
        </label>
        <label>
          Currency <input name="currency" required defaultValue="USD" size={4} />
        </label>
        <label>
          Pricing
          <select
            name="pricing"
            value={pricing}
            onChange={(e) => setPricing((e.currentTarget as HTMLSelectElement).value as Product['pricing'])}
          >
            <option value="flat">flat (per month)</option>
            <option value="metered">metered (per unit)</option>
            <option value="package">package (per started package of units)</option>
            <option value="tiered">tiered (price by usage tier)</option>
          </select>
        </label>
        {pricing !== 'tiered' && (
          <label>
            {pricing === 'package' ? 'Price per package' : 'Price'}{' '}
            <input name="price" inputMode="decimal" required placeholder={pricing === 'flat' ? '49.99' : '0.001'} />
          </label>
        )}
        {pricing === 'package' && (
          <label>
            Units per package <input name="package_size" inputMode="decimal" required placeholder="1000" />
          </label>
        )}
        {pricing === 'tiered' && (
          <>
            <label>
              Mode
              <select name="tiers_mode">
                <option value="graduated">graduated (each unit at its tier's price)</option>
                <option value="volume">volume (every unit at the reached tier's price)</option>
              </select>
            </label>
            <fieldset class="wide" data-testid="tiers">
              <legend>Tiers (the last one has no upper bound)</legend>
              {tiers.map((tier, i) => (
                <div class="tier" key={i}>
                  <label>
                    Up to{' '}
                    <input
                      name={`tier_${i}_up_to`}
                      inputMode="decimal"
                      size={8}
                      disabled={i === tiers.length - 1}
                      required={i < tiers.length - 1}
                      value={i === tiers.length - 1 ? 'no limit' : tier.up_to}
                      onInput={(e) => setTier(i, { up_to: (e.currentTarget as HTMLInputElement).value })}
                    />
                  </label>
                  <label>
                    Unit price{' '}
                    <input
                      name={`tier_${i}_unit_price`}
                      inputMode="decimal"
                      required
                      size={8}
                      value={tier.unit_price}
                      onInput={(e) => setTier(i, { unit_price: (e.currentTarget as HTMLInputElement).value })}
                    />
                  </label>
                  <label>
                    Flat fee{' '}
                    <input
                      name={`tier_${i}_flat_price`}
                      inputMode="decimal"
                      size={8}
                      placeholder="0"
                      value={tier.flat_price}
                      onInput={(e) => setTier(i, { flat_price: (e.currentTarget as HTMLInputElement).value })}
                    />
                  </label>
                  {tiers.length > 1 && (
                    <button type="button" onClick={() => setTiers((all) => all.filter((_t, k) => k !== i))}>
                      Remove
                    </button>
                  )}
                </div>
              ))}
              <button type="button" onClick={() => setTiers((all) => [...all, { ...NEW_TIER }])}>
                Add a tier
              </button>
            </fieldset>
          </>
        )}
        <button type="submit" disabled={create.busy}>
          Create product
        </button>
      </form>
      <ErrorBox error={create.error} />
    </Panel>
  );
}
