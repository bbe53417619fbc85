import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { NotFoundError } from '../../../shared/errors.js';
import { pageMoney } from '../../domain/hosted-pages/invoice-view.js';
import { esc } from '../hosted/templates.js';
import { asCustomer, numText, type ApiRoutes } from './api-call.js';
import { seeOther, visitPage } from './layout.js';
import { portalGet } from './route.js';

const STATUS: Record<string, string> = {
  open: 'Due',
  paid: 'Paid',
  void: 'Void',
  uncollectible: 'Uncollectible',
  draft: 'Draft',
};

/** GET /portal/invoices — the customer's invoices, each linking to its hosted page (view, PDF, pay). */
export function invoicesRoute(deps: ApiDeps, api: ApiRoutes): RouteDef {
  return portalGet(deps, '/portal/invoices', 'the invoices', async (visit) => {
    const list = await asCustomer(visit, api('GET /v1/billing/invoices'), { query: { per_page: '100' } });
    const rows = list.data
      .filter((i: any) => i.status !== 'draft')
      .map(
        (
          i: any,
        ) => `<tr id="invoice-${esc(i.id)}"><td>${esc(i.number ?? '')}</td><td>${esc(String(i.created_at).slice(0, 10))}</td>
<td class="num">${esc(pageMoney(numText(i.amount), i.currency))}</td><td><span class="status ${esc(i.status)}">${esc(STATUS[i.status] ?? i.status)}</span></td>
<td>${i.hosted_invoice_url ? `<a href="/portal/invoices/${esc(i.id)}">${i.status === 'open' || i.status === 'uncollectible' ? 'View and pay' : 'View'}</a> · <a href="/portal/invoices/${esc(i.id)}/pdf">PDF</a>` : ''}</td></tr>`,
      )
      .join('\n');
    return visitPage(deps.config, visit, {
      title: 'Your invoices',
      current: '/portal/invoices',
      body: `${rows ? `<table class="lines" id="invoices"><thead><tr><th scope="col">Number</th><th scope="col">Date</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Document</th></tr></thead><tbody>${rows}</tbody></table>` : '<p id="no-invoices">No invoices yet.</p>'}`,
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
