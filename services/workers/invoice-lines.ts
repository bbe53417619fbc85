import { priceInvoice, type InvoiceLinesTask, type PricedInvoice } from '../domain/pricing/invoice-lines.js';

/**
 * piscina task: the line maths of many invoices at once (services/domain/pricing/invoice-lines.ts). The billing
 * run sends a few hundred subscriptions per task so the structured-clone and hand-off cost is shared.
 */
export default function priceInvoices(task: InvoiceLinesTask): PricedInvoice[] {
  return task.invoices.map(priceInvoice);
}
