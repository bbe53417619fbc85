import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { readPortalSettings, type PortalSettings } from '../../domain/portal-settings/settings.js';
import { checkCustomerMayChange, type TermsChange } from '../../domain/subscriptions/terms-owner.js';
import { invoiceTexts } from '../../domain/invoices/invoice-texts.js';
import { OVERVIEW_LABELS } from '../../domain/portal/overview-texts.js';
import { esc, escWith } from '../hosted/templates.js';
import type { PortalVisit } from './access.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { usageChart } from './chart.js';
import { visitPage } from './layout.js';
import { csrfField, portalGet } from './route.js';
import { planChoices } from './plan-choices.js';

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
  // In the visit's language (services/domain/portal/overview-texts.ts), amounts and dates formatted for it.
  const l = OVERVIEW_LABELS[visit.locale];
  const t = invoiceTexts(visit.locale);
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
        const name = names[sub.items.indexOf(i)] ?? l.meter(String(n + 1));
        const total = `<span class="usage-total">${esc(t.quantity(numText(usage.value) || '0'))}</span>`;
        return `<figure class="usage-chart"><figcaption>${escWith(l.usageCaption, esc(name), total)}</figcaption>${usageChart(
          l.dailyUsage(name),
          usage.data.map((w: any) => ({
            start: w.start,
            value: numText(w.value),
            title: `${t.date(w.start)}: ${t.quantity(numText(w.value) || '0')}`,
          })),
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
      ? `<p class="note" id="cancel-note-${esc(sub.id)}">${esc(l.endsOn(t.date(sub.cancel_at)))}</p>`
      : '',
    sub.pause_collection
      ? `<p class="note" id="pause-note-${esc(sub.id)}">${esc(l.pausedSince(t.date(sub.pause_collection.paused_at)))}</p>`
      : '',
    sub.scheduled_plan_change
      ? `<p class="note" id="plan-change-note-${esc(sub.id)}">${escWith(l.changesTo, `<span class="next-plan">${esc(next?.name)}</span>`, esc(t.date(sub.scheduled_plan_change.at)))}</p>`
      : '',
  ].join('');
  const actions = [
    mayChange(settings, sub, { cancelAtPeriodEnd: true })
      ? sub.cancel_at_period_end
        ? action(visit, sub, 'keep', l.keep)
        : action(visit, sub, 'cancel', l.cancel)
      : '',
    mayChange(settings, sub, { pauseCollection: true })
      ? sub.pause_collection
        ? action(visit, sub, 'resume', l.resume)
        : action(visit, sub, 'pause', l.pause)
      : '',
    sub.status === 'active' && mayChange(settings, sub, {})
      ? `<form class="inline" method="post" action="/portal/subscriptions/${esc(sub.id)}/promotion" aria-label="${esc(l.promotionCode)}">${csrfField(visit)}<label for="code-${esc(sub.id)}">${esc(l.promotionCode)}</label> <input id="code-${esc(sub.id)}" name="code" required maxlength="64" autocomplete="off"> <button type="submit" id="promotion-${esc(sub.id)}">${esc(l.apply)}</button></form>`
      : '',
  ].join('');
  const lines = upcoming.lines
    .map(
      (x: any) =>
        `<tr><td>${esc(x.description)}</td><td class="num">${esc(t.money(numText(x.amount), upcoming.currency))}</td></tr>`,
    )
    .join('');
  const choices =
    settings.portal_change_plan && mayChange(settings, sub, { items: [] }) && sub.plan_id
      ? await planChoices(api, visit, sub, plan)
      : '';
  return `<section class="subscription" id="sub-${esc(sub.id)}" aria-labelledby="plan-${esc(sub.id)}">
<h2 id="plan-${esc(sub.id)}">${esc(plan?.name ?? l.yourSubscription)}</h2>
<p>${escWith(l.currentPeriod, `<span class="period">${esc(t.labels.range(t.date(sub.current_period_start), t.date(new Date(Date.parse(sub.current_period_end) - 1).toISOString())))}</span>`)}</p>
<ul class="items">${names.map((n: string, i: number) => `<li>${esc(n)}${numText(sub.items[i].quantity) !== '1' && sub.items[i].quantity !== undefined ? ` × ${esc(t.quantity(numText(sub.items[i].quantity)))}` : ''}</li>`).join('')}</ul>
${notes}
${sub.discount ? `<p class="note" id="discount-${esc(sub.id)}">${esc(l.discount(sub.discount.coupon?.name ?? ''))}</p>` : ''}
<div class="actions">${actions}</div>
${choices}
<h3>${esc(l.usageTitle)}</h3>
${charts.join('') || `<p class="muted">${esc(l.noMetered)}</p>`}
<h3>${esc(l.upcomingTitle)}</h3>
<table class="lines upcoming"><tbody>${lines}</tbody></table>
<p>${escWith(l.totalSoFar, `<strong class="upcoming-amount">${esc(t.money(numText(upcoming.amount), upcoming.currency))}</strong>`)}</p>
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
      // What a finished action says on the page it returns to (?done=…).
      const l = OVERVIEW_LABELS[visit.locale];
      const key = ctx.query.get('done') ?? '';
      const done = Object.hasOwn(l.done, key) ? l.done[key as keyof typeof l.done] : undefined;
      return visitPage(deps.config, visit, {
        title: l.title,
        current: '/portal',
        flash: done,
        body: `${sections.join('\n') || `<p id="no-subscription">${esc(l.noSubscription)}</p>`}`,
      });
    },
  );
}
