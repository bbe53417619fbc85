import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { ConflictError } from '../../../shared/errors.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { HostedInvoiceLinkSchema } from '../../../shared/api/hosted-pages.js';
import { changeHostedInvoiceLink } from '../../domain/hosted-pages/links.js';
import { hostedKey } from '../../domain/hosted-pages/tokens.js';
import { getInvoiceById } from '../../domain/invoices/store.js';

/**
 * POST /v1/billing/invoices/:invoice_id/hosted-link/revoke and …/rotate — an operator (admin) turns an invoice's
 * hosted link off (its page answers 410 and hosted_invoice_url is null), or replaces it by a new one (every earlier
 * link answers 410; a rotation also turns a revoked link back on, under the new token). Repeating a revoke is a no-op.
 */
export function invoiceLinkRoutes(deps: ApiDeps): RouteDef[] {
  const key = hostedKey(deps.config.SECRET_KEY);
  const route = (change: 'revoke' | 'rotate'): RouteDef => ({
    method: 'POST',
    path: `/v1/billing/invoices/:invoice_id/hosted-link/${change}`,
    auth: 'admin',
    handler: async (ctx) => {
      const { invoice } = await getInvoiceById(deps.pg, ctx.params.invoice_id!);
      if (invoice.status === 'draft')
        throw new ConflictError(`Invoice ${invoice.id} is a draft: it has no hosted page yet.`, 'invoice_draft');
      const url = await changeHostedInvoiceLink(
        deps.pg,
        key,
        deps.config.PUBLIC_BASE_URL,
        invoice.id,
        change,
        new Date(),
      );
      return reply.ok({ invoice_id: invoice.id, hosted_invoice_url: url });
    },
    doc: {
      summary:
        change === 'revoke'
          ? "Revoke an invoice's hosted link (operators): its page answers 410 and hosted_invoice_url becomes null"
          : "Rotate an invoice's hosted link (operators): a new hosted_invoice_url; every earlier link answers 410",
      tags: ['hosted pages'],
      responses: {
        '200': { description: 'the invoice and its link now', schema: HostedInvoiceLinkSchema },
        '404': problemResponse('no such invoice'),
        '409': problemResponse('a draft has no hosted page (`invoice_draft`)'),
      },
    },
  });
  return [route('revoke'), route('rotate')];
}
