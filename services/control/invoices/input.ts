import type { RequestContext } from '../../../shared/http/context.js';
import { queryValidator } from '../../../shared/http/validation.js';
import { ListInvoicesQuery, UpcomingInvoiceQuery } from '../../../shared/api/invoices.js';

/** Invoices' one validation place (the API only reads invoices: the billing run writes them). */
const listQuery = queryValidator<ListInvoicesQuery>(ListInvoicesQuery);

export const parseListInvoices = (ctx: RequestContext): ListInvoicesQuery => listQuery.parseQuery(ctx.query);

const upcomingQuery = queryValidator<UpcomingInvoiceQuery>(UpcomingInvoiceQuery);

export const parseUpcomingInvoice = (ctx: RequestContext): UpcomingInvoiceQuery => upcomingQuery.parseQuery(ctx.query);
