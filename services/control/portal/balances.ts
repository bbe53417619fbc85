import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageMoney } from '../../domain/hosted-pages/invoice-view.js';
import { esc } from '../hosted/templates.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { visitPage } from './layout.js';
import { csrfField, portalGet, portalPost } from './route.js';
import { readPortalSettings } from '../../domain/portal-settings/settings.js';

const day = (iso: string | null) => (iso ? String(iso).slice(0, 10) : '');

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
    const buy = mayBuy
      ? `<form method="post" action="/portal/credit/buy" aria-label="buy credit">${csrfField(visit)}
<label for="amount">Amount of credit to buy</label> <input id="amount" name="amount" required inputmode="decimal" pattern="[0-9]+([.][0-9]+)?">
<button type="submit" id="buy-credit">Buy credit</button>
<p class="hint">Charged now to your default card; the credit is added once the payment succeeds.</p></form>`
      : '';
    const balance = credits.balance
      .map((b: any) => `<li>${esc(pageMoney(numText(b.amount), b.currency))}</li>`)
      .join('');
    const grants = credits.data
      .map(
        (
          g: any,
        ) => `<tr><td>${esc(day(g.created_at))}</td><td>${esc(g.description)}</td><td class="num">${esc(pageMoney(numText(g.amount), g.currency))}</td>
<td class="num">${esc(pageMoney(numText(g.remaining), g.currency))}</td><td>${esc(day(g.expires_at) || 'never')}</td></tr>`,
      )
      .join('\n');
    const entitlements = ents.data
      .map((e: any, i: number) => {
        const c = checks[i];
        const detail =
          e.type === 'metered'
            ? `${esc(numText(c.usage))} used of ${esc(numText(c.limit))} — <strong class="ent-balance">${esc(numText(c.balance))}</strong> left this period`
            : c.has_access
              ? 'included'
              : 'not included';
        return `<tr id="ent-${esc(e.id)}"><td>${esc(e.feature)}</td><td>${detail}</td></tr>`;
      })
      .join('\n');
    return visitPage(deps.config, visit, {
      title: 'Credit and entitlements',
      current: '/portal/balances',
      body: `<h2>Credit balance</h2>
${balance ? `<ul id="credit-balance">${balance}</ul>` : '<p id="credit-balance">No prepaid credit.</p>'}
${buy}
${grants ? `<table class="lines" id="credit-ledger"><caption>Credit grants</caption><thead><tr><th scope="col">Date</th><th scope="col">Description</th><th scope="col" class="num">Granted</th><th scope="col" class="num">Remaining</th><th scope="col">Expires</th></tr></thead><tbody>${grants}</tbody></table>` : ''}
<h2>Entitlements</h2>
${entitlements ? `<table class="lines" id="entitlements"><thead><tr><th scope="col">Feature</th><th scope="col">This period</th></tr></thead><tbody>${entitlements}</tbody></table>` : '<p id="no-entitlements">No entitlements.</p>'}`,
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
