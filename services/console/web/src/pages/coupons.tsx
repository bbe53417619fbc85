import { useState } from 'preact/hooks';
import { useApp } from '../ui/app-context.js';
import { useAction, useAsync } from '../ui/hooks.js';
import { Empty, ErrorBox, formValues, Pager, Panel } from '../ui/components.js';
import { formatTime } from '../lib/format.js';
import { decimalText, exactJson, type ListPage } from '../lib/api.js';
import type { Coupon, Subscription } from '../lib/types.js';

/** "25 % off", "10 USD off". */
export function couponTerms(c: Pick<Coupon, 'percent_off' | 'amount_off' | 'currency'>): string {
  return c.percent_off !== null ? `${c.percent_off} % off` : `${c.amount_off} ${c.currency} off`;
}

/** "once", "for 3 periods", "forever". */
export function couponDuration(c: Pick<Coupon, 'duration' | 'duration_in_periods'>): string {
  if (c.duration === 'repeating') return `for ${c.duration_in_periods} periods`;
  return c.duration;
}

/** A subscription's discount as a customer reads it: "LOYAL25 — 25 % off, forever, from 2026-11-01". */
export function discountText(d: NonNullable<Subscription['discount']>): string {
  return `${d.coupon.name} — ${couponTerms(d.coupon)}, ${couponDuration(d.coupon)}, from ${d.start.slice(0, 10)}`;
}

/**
 * The operator's coupons (docs/coupons.md): the list with how often each was redeemed, and a form to make one.
 * Applying a coupon to a customer's subscription is a PATCH of the subscription (coupon_id).
 */
export function CouponsPage() {
  const { api } = useApp();
  const [page, setPage] = useState(1);
  const [kind, setKind] = useState<'percent' | 'amount'>('percent');
  const [duration, setDuration] = useState<Coupon['duration']>('once');
  const list = useAsync(() => api.get<ListPage<Coupon>>('/v1/coupons', { page, per_page: 20 }), [page]);
  const create = useAction(async (v: Record<string, string>) => {
    const terms =
      kind === 'percent'
        ? { percent_off: decimalText('percent_off', v.value ?? '') }
        : { amount_off: decimalText('amount_off', v.value ?? ''), currency: v.currency?.trim() };
    const body: Record<string, unknown> = { name: v.name?.trim(), ...terms, duration };
    if (duration === 'repeating') body.duration_in_periods = Number(v.duration_in_periods);
    if (v.max_redemptions?.trim()) body.max_redemptions = Number(v.max_redemptions);
    if (v.expires_at?.trim()) body.expires_at = new Date(v.expires_at).toISOString();
    await api.post<Coupon>('/v1/coupons', exactJson(body));
    list.reload();
  });
  return (
    <>
      <Panel title="Coupons">
        <p class="hint">
          A coupon applied to a subscription (<code>PATCH /v1/subscriptions/{'{id}'}</code> with <code>coupon_id</code>)
          puts a <code>discount</code> line on its invoices, before tax and prepaid credit.
        </p>
        <ErrorBox error={list.error} onRetry={list.reload} />
        {list.data?.data.length === 0 && <Empty>No coupons yet.</Empty>}
        {!!list.data?.data.length && (
          <table class="list" data-testid="coupons">
            <thead>
              <tr>
                <th>coupon</th>
                <th>terms</th>
                <th>duration</th>
                <th class="num">redeemed</th>
                <th>expires</th>
                <th>created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((c) => (
                <tr key={c.id} data-coupon-id={c.id}>
                  <td>
                    {c.name}
                    <div class="id">{c.id}</div>
                  </td>
                  <td data-testid="terms">{couponTerms(c)}</td>
                  <td data-testid="duration">{couponDuration(c)}</td>
                  <td class="num" data-testid="redeemed">
                    {c.times_redeemed}
                    {c.max_redemptions !== null && ` of ${c.max_redemptions}`}
                  </td>
                  <td>{c.expires_at ? formatTime(c.expires_at) : <span class="hint">never</span>}</td>
                  <td>{formatTime(c.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <Pager page={list.data?.pagination} onPage={setPage} />
      </Panel>
      <Panel title="Create a coupon">
        <ErrorBox error={create.error} />
        <form class="grid" aria-label="create coupon" onSubmit={(e) => void create.run(formValues(e))}>
          <label>
            Name <input name="name" required placeholder="LOYAL25" />
          </label>
          <label>
            Discount{' '}
            <select
              name="kind"
              value={kind}
              onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as 'percent' | 'amount')}
            >
              <option value="percent">percent off</option>
              <option value="amount">amount off</option>
            </select>
          </label>
          <label>
            {kind === 'percent' ? 'Percent' : 'Amount'} <input name="value" required placeholder="25" size={8} />
          </label>
          {kind === 'amount' && (
            <label>
              Currency <input name="currency" required placeholder="USD" size={4} />
            </label>
          )}
          <label>
            Duration{' '}
            <select
              name="duration"
              value={duration}
              onChange={(e) => setDuration((e.currentTarget as HTMLSelectElement).value as Coupon['duration'])}
            >
              <option value="once">once</option>
              <option value="repeating">repeating</option>
              <option value="forever">forever</option>
            </select>
          </label>
          {duration === 'repeating' && (
            <label>
              Periods <input name="duration_in_periods" required type="number" min={1} max={120} size={4} />
            </label>
          )}
          <label>
            Max redemptions <input name="max_redemptions" type="number" min={1} placeholder="no limit" />
          </label>
          <label>
            Expires <input name="expires_at" type="datetime-local" />
          </label>
          <div class="wide">
            <button type="submit" disabled={create.busy}>
              Create coupon
            </button>
          </div>
        </form>
      </Panel>
    </>
  );
}
