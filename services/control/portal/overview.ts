import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { readPortalSettings, type PortalSettings } from '../../domain/portal-settings/settings.js';
import { checkCustomerMayChange, type TermsChange } from '../../domain/subscriptions/terms-owner.js';
import { pageMoney } from '../../domain/hosted-pages/invoice-view.js';
import { esc } from '../hosted/templates.js';
import type { PortalVisit } from './access.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { usageChart } from './chart.js';
import { visitPage } from './layout.js';
import { csrfField, portalGet } from './route.js';
import { planChoices } from './plan-choices.js';

/** What a finished action says on the page it returns to (?done=…). */
const DONE: Record<string, string> = {
  cancel: 'Your subscription will end at the end of the current period.',
  keep: 'Your subscription continues: the cancellation is undone.',
  pause: 'Invoicing is paused.',
  resume: 'Invoicing is resumed.',
  upgraded: 'Your plan is changed now; the rest of this period is pro-rated on your next invoice.',
  scheduled: 'Your plan changes at the end of the current period.',
  promotion: 'The promotion code is applied from this period on.',
};

const day = (iso: string) => iso.slice(0, 10);

/** Whether the customer may make `change` (the API's own rule, terms-owner.ts): the portal shows only those forms. */
function mayChange(settings: PortalSettings, sub: any, change: TermsChange): boolean {
  try {
    checkCustomerMayChange(false, { id: sub.id, operator_managed: sub.managed_by === 'operator' }, change, settings);
    return true;
  } catch {
    return false;
  }
}

const action = (visit: PortalVisit, sub: any, name: string, label: string) =>
  `<form class="inline" method="post" action="/portal/subscriptions/${esc(sub.id)}/${name}">${csrfField(visit)}<button type="submit" id="${name}-${esc(sub.id)}">${esc(label)}</button></form>`;

async function subscriptionSection(
  deps: ApiDeps,
  api: ApiRoutes,
  visit: PortalVisit,
  settings: PortalSettings,
  sub: any,
): Promise<string> {
  const plan = sub.plan_id
    ? await asCustomer(visit, api('GET /v1/plans/:plan_id'), {
        params: { plan_id: sub.plan_id },
        query: { version: numText(sub.plan_version) },
      })
    : null;
  const names = await Promise.all(
    sub.items.map(
      async (i: any) =>
        (await asCustomer(visit, api('GET /v1/products/:product_id'), { params: { product_id: i.product_id } })).name,
    ),
  );
  const upcoming = await asCustomer(visit, api('GET /v1/billing/invoices/upcoming'), {
    query: { subscription_id: sub.id },
  });
  const charts = await Promise.all(
    sub.items
      .filter((i: any) => i.meter_id)
      .map(async (i: any, n: number) => {
        const usage = await asCustomer(visit, api('GET /v1/meters/:meter_id/usage'), {
          params: { meter_id: i.meter_id },
          query: {
            start_date: day(sub.current_period_start),
            end_date: day(new Date(Date.parse(sub.current_period_end) - 86_400_000).toISOString()),
            window: 'day',
          },
        });
        const name = names[sub.items.indexOf(i)] ?? `meter ${n + 1}`;
        return `<figure class="usage-chart"><figcaption>${esc(name)}: <span class="usage-total">${esc(numText(usage.value))}</span> this period</figcaption>${usageChart(
          `Daily usage of ${name}`,
          usage.data.map((w: any) => ({ start: w.start, value: numText(w.value) })),
        )}</figure>`;
      }),
  );
  const next = sub.scheduled_plan_change
    ? await asCustomer(visit, api('GET /v1/plans/:plan_id'), {
        params: { plan_id: sub.scheduled_plan_change.plan_id },
        query: { version: numText(sub.scheduled_plan_change.plan_version) },
      })
    : null;
  const notes = [
    sub.cancel_at_period_end
      ? `<p class="note" id="cancel-note-${esc(sub.id)}">Ends on ${esc(day(sub.cancel_at))}.</p>`
      : '',
    sub.pause_collection
      ? `<p class="note" id="pause-note-${esc(sub.id)}">Invoicing paused since ${esc(day(sub.pause_collection.paused_at))}.</p>`
      : '',
    sub.scheduled_plan_change
      ? `<p class="note" id="plan-change-note-${esc(sub.id)}">Changes to <span class="next-plan">${esc(next?.name)}</span> on ${esc(day(sub.scheduled_plan_change.at))}.</p>`
      : '',
  ].join('');
  const actions = [
    mayChange(settings, sub, { cancelAtPeriodEnd: true })
      ? sub.cancel_at_period_end
        ? action(visit, sub, 'keep', 'Keep my subscription')
        : action(visit, sub, 'cancel', 'Cancel at the end of the period')
      : '',
    mayChange(settings, sub, { pauseCollection: true })
      ? sub.pause_collection
        ? action(visit, sub, 'resume', 'Resume invoicing')
        : action(visit, sub, 'pause', 'Pause invoicing')
      : '',
    sub.status === 'active' && mayChange(settings, sub, {})
      ? `<form class="inline" method="post" action="/portal/subscriptions/${esc(sub.id)}/promotion" aria-label="promotion code">${csrfField(visit)}<label for="code-${esc(sub.id)}">Promotion code</label> <input id="code-${esc(sub.id)}" name="code" required maxlength="64" autocomplete="off"> <button type="submit" id="promotion-${esc(sub.id)}">Apply</button></form>`
      : '',
  ].join('');
  const lines = upcoming.lines
    .map(
      (l: any) =>
        `<tr><td>${esc(l.description)}</td><td class="num">${esc(pageMoney(numText(l.amount), upcoming.currency))}</td></tr>`,
    )
    .join('');
  const choices =
    settings.portal_change_plan && mayChange(settings, sub, { items: [] }) && sub.plan_id
      ? await planChoices(api, visit, sub, plan)
      : '';
  return `<section class="subscription" id="sub-${esc(sub.id)}" aria-labelledby="plan-${esc(sub.id)}">
<h2 id="plan-${esc(sub.id)}">${esc(plan?.name ?? 'Your subscription')}</h2>
<p>Current period: <span class="period">${esc(day(sub.current_period_start))} to ${esc(day(new Date(Date.parse(sub.current_period_end) - 1).toISOString()))}</span></p>
<ul class="items">${names.map((n: string, i: number) => `<li>${esc(n)}${numText(sub.items[i].quantity) !== '1' && sub.items[i].quantity !== undefined ? ` × ${esc(numText(sub.items[i].quantity))}` : ''}</li>`).join('')}</ul>
${notes}
${sub.discount ? `<p class="note" id="discount-${esc(sub.id)}">Discount: ${esc(sub.discount.coupon?.name ?? '')}</p>` : ''}
<div class="actions">${actions}</div>
${choices}
<h3>This period’s usage</h3>
${charts.join('') || '<p class="muted">No metered items.</p>'}
<h3>Upcoming invoice</h3>
<table class="lines upcoming"><tbody>${lines}</tbody></table>
<p>Total so far: <strong class="upcoming-amount">${esc(pageMoney(numText(upcoming.amount), upcoming.currency))}</strong></p>
</section>`;
}

/** GET /portal — the overview: each live subscription's plan, usage chart, upcoming invoice and actions. */
export function overviewRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalGet(
    deps,
    '/portal',
    'the overview: plans, this period’s usage, upcoming invoices',
    async (visit, ctx) => {
      const { settings } = await readPortalSettings(deps.pg);
      const subs = (await asCustomer(visit, api('GET /v1/subscriptions'), { query: { per_page: '100' } })).data.filter(
        (s: any) => s.status !== 'canceled',
      );
      const sections = await Promise.all(subs.map((s: any) => subscriptionSection(deps, api, visit, settings, s)));
      const done = DONE[ctx.query.get('done') ?? ''];
      return visitPage(deps.config, visit, {
        title: 'Your subscription',
        current: '/portal',
        flash: done,
        body: `${sections.join('\n') || '<p id="no-subscription">You have no active subscription.</p>'}`,
      });
    },
  );
}
