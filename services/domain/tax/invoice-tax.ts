import type { PgClient, PgPool } from '../../../shared/clients/postgres.js';
import type { PricedInvoice } from '../pricing/invoice-lines.js';
import { applyTax, isTaxable, ratesOf, type InvoiceTotals } from './compute.js';
import { activeTaxRates, productTaxRateIds, taxRatesByIds } from './store.js';
import type { TaxProfile } from './types.js';

/** SQL of an account's tax profile, for a query over `accounts` aliased `a`. */
export const TAX_PROFILE_COLUMNS = (a: string) =>
  `${a}.tax_exempt, ${a}.address->>'country' AS country, ${a}.address->>'region' AS region, ${a}.net_terms_days`;

/**
 * Taxes several priced invoices (the close's batch, or the upcoming invoice) with the rates as they are now: the
 * active rates and each product's named ones, two queries in `q` (the close's transaction client).
 */
export async function taxInvoices(
  q: PgPool | PgClient,
  invoices: { priced: PricedInvoice; profile: TaxProfile }[],
): Promise<InvoiceTotals[]> {
  const taxed = invoices.filter((v) => v.profile.tax_exempt === 'none');
  const products = [...new Set(taxed.flatMap((v) => v.priced.lines.filter(isTaxable).map((l) => l.product_id!)))];
  const [active, named] = taxed.length
    ? [await activeTaxRates(q), await productTaxRateIds(q, products)]
    : [new Map(), new Map<string, string[]>()];
  // Deduction lines (progressive billing) carry the tax their threshold invoice billed, at its rates.
  const deducted = [
    ...new Set(invoices.flatMap((v) => v.priced.lines.flatMap((l) => (l.type === 'deduction' ? (l.taxes ?? []) : [])))),
  ].map((t) => t.tax_rate_id);
  const byId = deducted.length ? await taxRatesByIds(q, deducted) : new Map();
  return invoices.map(({ priced, profile }) =>
    applyTax(
      priced,
      profile,
      (productId) => ratesOf(named.get(productId) ?? [], profile, active),
      (id) => byId.get(id),
    ),
  );
}
