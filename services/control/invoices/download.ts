import type { Piscina } from 'piscina';
import type { ApiDeps, OperationDoc, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { runPooled } from '../../workers/pool.js';
import type { InvoicePdfTask } from '../../workers/invoice-pdf.js';
import type { Seller } from '../../workers/pdf-document.js';
import type { Config } from '../../../shared/config.js';
import type { Infra } from '../../../shared/infra.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { getBillingInfo } from '../../domain/billing-info/store.js';
import {
  accountName,
  customerReference,
  getInvoice,
  invoiceNumbers,
  linePriceModels,
} from '../../domain/invoices/store.js';
import { documentLines, invoicesNamedIn } from '../../domain/invoices/document-lines.js';
import { invoiceDueAt } from '../../domain/invoices/types.js';
import { legalDetails } from '../../domain/invoices/store.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import { accountActingOn } from '../../domain/customers/acting-for.js';

export type InvoicePdfPool = Piscina<InvoicePdfTask, Uint8Array>;

/**
 * GET /v1/billing/invoices/:invoice_id/download — the invoice as a PDF (customer, billing address, period,
 * lines, total), rendered in a piscina worker. The address is the account's current one. The caller's own, or
 * (admin) any customer's; else 404.
 */
export function downloadInvoiceRoute(deps: ApiDeps, pool: () => InvoicePdfPool): RouteDef {
  return {
    method: 'GET',
    path: '/v1/billing/invoices/:invoice_id/download',
    auth: 'read',
    handler: async (ctx) => {
      const id = ctx.params.invoice_id!;
      const task = await invoicePdfTask(deps, await accountActingOn(deps.pg, ctx.principal!, 'invoice', id), id);
      return reply.pdf(await runPooled(pool(), task, 'invoice PDF'), task.invoice.id);
    },
    doc: {
      summary: 'Download an invoice as a PDF (Content-Disposition: attachment; filename="<id>.pdf")',
      tags: ['billing'],
      responses: pdfResponses('The invoice'),
    },
  };
}

/**
 * What the invoice PDF shows (the download route and the invoice emails render the same): the invoice of the
 * account (another account's is not found), its lines, the account's current billing address, the seller.
 */
export async function invoicePdfTask(
  { pg, config }: Pick<Infra, 'pg' | 'config'>,
  accountId: string,
  invoiceId: string,
): Promise<InvoicePdfTask> {
  const { invoice, lines } = await getInvoice(pg, accountId, invoiceId);
  const referred = invoicesNamedIn(lines);
  const [billing, name, legal, reference, priceModels, numbers] = await Promise.all([
    getBillingInfo(pg, accountId),
    accountName(pg, accountId),
    legalDetails(pg, accountId),
    customerReference(pg, accountId),
    linePriceModels(pg, invoiceId),
    invoiceNumbers(pg, accountId, referred),
  ]);
  const taxIncluded = lines
    .filter((l) => l.type === 'tax' && new Decimal(l.amount).isZero())
    .reduce((s, l) => s.plus(l.tax_amount ?? '0'), new Decimal(0));
  const task: InvoicePdfTask = {
    invoice: {
      id: invoice.id,
      number: invoice.number,
      status: invoice.status,
      reason: invoice.reason,
      currency: invoice.currency,
      amount: invoice.amount,
      amount_credited: invoice.amount_credited,
      period_start: invoice.period_start,
      period_end: invoice.period_end,
      created_at: invoice.created_at.toISOString(),
      due_at: invoiceDueAt(invoice).toISOString(),
      subtotal: invoice.subtotal,
      tax: invoice.tax,
      tax_included: canonicalDecimal(taxIncluded),
      tax_exempt: invoice.tax_exempt,
      paid_at: invoice.paid_at ? invoice.paid_at.toISOString() : null,
    },
    lines: documentLines(lines, invoice.currency, priceModels, numbers),
    customer: { name, reference, legal_name: legal.legal_name, tax_ids: legal.tax_ids },
    address: billing.billing_address,
    legal_address: legal.address,
    seller: sellerOf(config),
    locale: legal.locale,
  };
  return task;
}

/** The seller printed on billing documents: the deployment's configuration (SELLER_*, INVOICE_FOOTER). */
export function sellerOf(config: Config): Seller {
  return {
    name: config.SELLER_NAME,
    address: config.SELLER_ADDRESS,
    tax_id: config.SELLER_TAX_ID,
    footer: config.INVOICE_FOOTER,
  };
}

/** The OpenAPI answers of a PDF download route (invoices, credit notes). */
export function pdfResponses(what: string): NonNullable<OperationDoc['responses']> {
  return {
    '200': {
      description: `${what} as a PDF document`,
      schema: { type: 'string', contentMediaType: 'application/pdf' },
      contentType: 'application/pdf',
    },
    '503': problemResponse('Too many PDFs are being rendered at once (unavailable); retry after Retry-After seconds'),
  };
}
