import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { invoiceTexts } from '../../domain/invoices/invoice-texts.js';
import { ACCOUNT_LABELS } from '../../domain/portal/account-texts.js';
import { PORTAL_LABELS } from '../../domain/portal/portal-texts.js';
import { esc, escWith } from '../hosted/templates.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { visitPage } from './layout.js';
import { csrfField, portalGet, portalPost } from './route.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';

/**
 * GET /portal/balances — prepaid credit (the balance per currency and each grant: the ledger of what was granted and
 * what remains) and entitlements with this period's balance (the API's check: limit − usage).
 */
export function balancesRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalGet(deps, '/portal/balances', 'credit balance, its grants, entitlements', async (visit) => {
    const credits = await asCustomer(visit, api('GET /v1/billing/credits'), { query: { per_page: '100' } });
    const ents = await asCustomer(visit, api('GET /v1/entitlements'), { query: { per_page: '100' } });
    const checks = await Promise.all(
      ents.data.map((e: any) =>
        asCustomer(visit, api('GET /v1/entitlements/check'), { query: { feature: e.feature } }),
      ),
    );
    // Offered only when the operator lets customers buy credit (the API refuses it otherwise, 403).
    const mayBuy = (await readPortalSettings(deps.pg)).settings.customer_can_buy_credit;
    // In the visit's language (services/domain/portal/account-texts.ts), amounts and dates formatted for it.
    const l = ACCOUNT_LABELS[visit.locale];
    const t = invoiceTexts(visit.locale);
    const day = (iso: string | null) => (iso ? t.date(String(iso)) : '');
    const buy = mayBuy
      ? `<form method="post" action="/portal/credit/buy" aria-label="${esc(l.buyCredit)}">${csrfField(visit)}
<label for="amount">${esc(l.amountToBuy)}</label> <input id="amount" name="amount" required inputmode="decimal" pattern="[0-9]+([.][0-9]+)?">
<button type="submit" id="buy-credit">${esc(l.buyCredit)}</button>
<p class="hint">${esc(l.buyNote)}</p></form>`
      : '';
    const balance = credits.balance.map((b: any) => `<li>${esc(t.money(numText(b.amount), b.currency))}</li>`).join('');
    const grants = credits.data
      .map(
        (
          g: any,
        ) => `<tr><td>${esc(day(g.created_at))}</td><td>${esc(g.description)}</td><td class="num">${esc(t.money(numText(g.amount), g.currency))}</td>
<td class="num">${esc(t.money(numText(g.remaining), g.currency))}</td><td>${esc(day(g.expires_at) || l.never)}</td></tr>`,
      )
      .join('\n');
    const entitlements = ents.data
      .map((e: any, i: number) => {
        const c = checks[i];
        const detail =
          e.type === 'metered'
            ? escWith(
                l.usedOf,
                esc(t.quantity(numText(c.usage))),
                esc(t.quantity(numText(c.limit))),
                `<strong class="ent-balance">${esc(t.quantity(numText(c.balance)))}</strong>`,
              )
            : esc(c.has_access ? l.included : l.notIncluded);
        return `<tr id="ent-${esc(e.id)}"><td>${esc(e.feature)}</td><td>${detail}</td></tr>`;
      })
      .join('\n');
    return visitPage(deps.config, visit, {
      title: PORTAL_LABELS[visit.locale].sections.balances,
      current: '/portal/balances',
      body: `<h2>${esc(l.creditBalance)}</h2>
${balance ? `<ul id="credit-balance">${balance}</ul>` : `<p id="credit-balance">${esc(l.noCredit)}</p>`}
${buy}
${grants ? `<table class="lines" id="credit-ledger"><caption>${esc(l.creditGrants)}</caption><thead><tr><th scope="col">${esc(l.date)}</th><th scope="col">${esc(l.description)}</th><th scope="col" class="num">${esc(l.granted)}</th><th scope="col" class="num">${esc(l.remaining)}</th><th scope="col">${esc(l.expiresColumn)}</th></tr></thead><tbody>${grants}</tbody></table>` : ''}
<h2>${esc(l.entitlements)}</h2>
${entitlements ? `<table class="lines" id="entitlements"><thead><tr><th scope="col">${esc(l.feature)}</th><th scope="col">${esc(l.thisPeriod)}</th></tr></thead><tbody>${entitlements}</tbody></table>` : `<p id="no-entitlements">${esc(l.noEntitlements)}</p>`}`,
    });
  });
}

/**
 * POST /portal/credit/buy — the customer buys prepaid credit: its own POST /v1/credit_top_ups, so the portal setting
 * customer_can_buy_credit, the card on file and the amount's rules are the API's (docs/credits.md "Prepaid credit").
 */
export function buyCreditRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalPost(deps, '/portal/credit/buy', 'buy prepaid credit', async (visit, _ctx, form) => {
    const text = (form.amount ?? '').trim();
    // A form sends text; the API takes a number. Anything but a plain decimal goes as written, for the API's 422.
    const amount = /^\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    await asCustomer(visit, api('POST /v1/credit_top_ups'), { body: { amount } });
    return '/portal/balances?done=credit';
  });
}
