import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import { invoiceTexts } from '../../domain/invoices/invoice-texts.js';
import { PORTAL_LABELS } from '../../domain/portal/portal-texts.js';
import { esc } from '../hosted/templates.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { seeOther, visitPage } from './layout.js';
import { portalGet } from './route.js';

/** GET /portal/invoices — the customer's invoices, each linking to its hosted page (view, PDF, pay). */
export function invoicesRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalGet(deps, '/portal/invoices', 'the invoices', async (visit) => {
    const list = await asCustomer(visit, api('GET /v1/billing/invoices'), { query: { per_page: '100' } });
    // In the visit's language, amounts and dates formatted for it.
    const t = invoiceTexts(visit.locale);
    const l = PORTAL_LABELS[visit.locale];
    const rows = list.data
      .filter((i: any) => i.status !== 'draft')
      .map(
        (
          i: any,
        ) => `<tr id="invoice-${esc(i.id)}"><td>${esc(i.number ?? '')}</td><td>${esc(t.date(String(i.created_at)))}</td>
<td class="num">${esc(t.money(numText(i.amount), i.currency))}</td><td><span class="status ${esc(i.status)}">${esc(l.statuses[i.status as 'open'] ?? i.status)}</span></td>
<td>${i.hosted_invoice_url ? `<a href="/portal/invoices/${esc(i.id)}">${esc(i.status === 'open' || i.status === 'uncollectible' ? l.viewAndPay : l.view)}</a> · <a href="/portal/invoices/${esc(i.id)}/pdf">PDF</a>` : ''}</td></tr>`,
      )
      .join('\n');
    return visitPage(deps.config, visit, {
      title: l.invoicesTitle,
      current: '/portal/invoices',
      body: `${rows ? `<table class="lines" id="invoices"><thead><tr><th scope="col">${esc(l.number)}</th><th scope="col">${esc(l.date)}</th><th scope="col" class="num">${esc(l.amount)}</th><th scope="col">${esc(l.status)}</th><th scope="col">${esc(l.document)}</th></tr></thead><tbody>${rows}</tbody></table>` : `<p id="no-invoices">${esc(l.noInvoices)}</p>`}`,
    });
  });
}

/**
 * GET /portal/invoices/:invoice_id and …/pdf — to the invoice's hosted page (or its PDF), where it is viewed and paid:
 * the customer's own GET /v1/billing/invoices/:id, so another customer's invoice is 404.
 */
export function invoiceLinkRoutes(deps: ApiDeps, api: ApiRoutes): RouteDef[] {
  const to = (suffix: string) => async (visit: any, ctx: any) => {
    const invoice = await asCustomer(visit, api('GET /v1/billing/invoices/:invoice_id'), {
      params: { invoice_id: ctx.params.invoice_id! },
    });
    if (!invoice.hosted_invoice_url) throw new NotFoundError(`Invoice ${invoice.id} has no page.`);
    return seeOther(`${invoice.hosted_invoice_url}${suffix}`);
  };
  return [
    portalGet(deps, '/portal/invoices/:invoice_id', 'to an invoice’s hosted page', to('')),
    portalGet(deps, '/portal/invoices/:invoice_id/pdf', 'to an invoice’s PDF', to('/pdf')),
  ];
}
