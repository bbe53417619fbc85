import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Badge, Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { formatTime } from '../lib/format.js';
import type { ListPage } from '../lib/api.js';
import type { PaymentMethod } from '../lib/types.js';

/** The sandbox processor's test cards (docs/design.md §8), as Stripe's. */
const TEST_CARDS = [
  { number: '4242 4242 4242 4242', label: 'Visa, charges succeed' },
  { number: '4000 0000 0000 9995', label: 'Visa, charges fail: insufficient funds' },
  { number: '4000 0000 0000 0002', label: 'Visa, declined when added' },
  { number: '5555 5555 5555 4444', label: 'Mastercard, charges succeed' },
];

export function PaymentMethodsPage() {
  const { api, canWrite } = useApp();
  const [page, setPage] = useState(1);
  const list = useAsync(
    () => api.get<ListPage<PaymentMethod>>('/v1/billing/payment-methods', { page, per_page: 20 }),
    [page],
  );
  const makeDefault = useAction(async (pm: PaymentMethod) => {
    await api.patch(`/v1/billing/payment-methods/${pm.id}/default`);
    list.reload();
  });
  return (
    <>
      <Panel title="Payment methods">
        <ErrorBox error={list.error} onRetry={list.reload} />
        <ErrorBox error={makeDefault.error} />
        {list.data?.data.length === 0 && <Empty>No card yet: invoices cannot be charged until one is added.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="payment-methods">
            <thead>
              <tr>
                <th>card</th>
                <th>expires</th>
                <th>added</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((pm) => (
                <tr key={pm.id} data-payment-method-id={pm.id}>
                  <td>
                    {pm.card.brand} •••• {pm.card.last4} {pm.is_default && <Badge value="default" />}
                    <div class="id">{pm.id}</div>
                  </td>
                  <td>
                    {String(pm.card.exp_month).padStart(2, '0')}/{pm.card.exp_year}
                  </td>
                  <td>{formatTime(pm.created_at)}</td>
                  <td class="actions">
                    {canWrite && !pm.is_default && (
                      <button type="button" disabled={makeDefault.busy} onClick={() => makeDefault.run(pm)}>
                        Set as default
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
      {canWrite && <AddCard onAdded={list.reload} />}
    </>
  );
}

function AddCard({ onAdded }: { onAdded: () => void }) {
  const { api } = useApp();
  const [number, setNumber] = useState(TEST_CARDS[0]!.number);
  const year = new Date().getUTCFullYear() + 3;
  const add = useAction(async (v: Record<string, string>) => {
    await api.post('/v1/billing/payment-methods', {
      type: 'card',
      card: { number: v.number, exp_month: Number(v.exp_month), exp_year: Number(v.exp_year), cvc: v.cvc },
    });
    onAdded();
  });
  return (
    <Panel title="Add a test card">
      <p class="hint">
        The sandbox processor takes test numbers only; the number and CVC are checked and then discarded (only brand,
        last four digits and expiry are kept).
      </p>
      <form class="grid" onSubmit={(e) => void add.run(formValues(e))}>
        <label>
          Test card
          <select value={number} onChange={(e) => setNumber((e.currentTarget as HTMLSelectElement).value)}>
            {TEST_CARDS.map((c) => (
              <option key={c.number} value={c.number}>
                {c.number} — {c.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Number{' '}
          <input
            name="number"
            value={number}
            onInput={(e) => setNumber((e.currentTarget as HTMLInputElement).value)}
            autocomplete="off"
            required
          />
        </label>
        <label>
          Month <input name="exp_month" type="number" min={1} max={12} defaultValue="12" required />
        </label>
        <label>
          Year <input name="exp_year" type="number" defaultValue={String(year)} required />
        </label>
        <label>
          CVC <input name="cvc" defaultValue="123" autocomplete="off" required />
        </label>
        <button type="submit" disabled={add.busy}>
          Add card
        </button>
      </form>
      <ErrorBox error={add.error} />
    </Panel>
  );
}
