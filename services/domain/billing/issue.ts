import type { PgClient } from '../../../shared/clients/postgres.js';
import type { InvoiceReason } from '../../../shared/vocabulary.js';
import { appendEvents } from '../events/outbox-store.js';
import { issuedEvents } from '../invoices/events.js';
import { hostedInvoiceUrl, type HostedLinks } from '../hosted-pages/links.js';
import { numberDocuments } from '../invoices/numbering.js';
import type { PricedInvoice } from '../pricing/invoice-lines.js';
import { recordCreditUses, type CreditUse } from './credits.js';
import { writeExcessGrants, type ExcessGrant } from './deductions.js';
import type { BillingDeps } from './deps.js';
import { insertInvoiceLines, insertInvoices, type InvoiceRow } from './issue-store.js';

/** An invoice as an issue returns it. */
export interface ClosedInvoice {
  id: string;
  customer_id: string;
  /** null for a top-up invoice (top-ups.ts). */
  subscription_id: string | null;
  amount: string;
  currency: string;
  /** draft: written at the period's end with BILLING_DRAFTS, finalized later (services/domain/billing/drafts.ts). */
  status: 'draft' | 'open' | 'paid';
}

/** An invoice to issue: its row and its priced lines (their sum is its amount). */
export interface InvoiceToIssue extends InvoiceRow {
  priced: Pick<PricedInvoice, 'currency' | 'amount' | 'lines'>;
}

/** What an issue writes besides the invoices, and what the caller does before the numbers are taken. */
export interface IssueParts {
  /** Prepaid credit the invoices take (credits.ts): recorded for the invoices really written. */
  creditUses: CreditUse[];
  /** What the period's threshold invoices billed beyond it, as credit (deductions.ts). */
  excess?: ExcessGrant[];
  /** Once the invoices are written, before their numbers (a close moves its subscriptions to their next periods). */
  beforeNumbering?: () => Promise<void>;
}

/**
 * THE issue of invoices, for every kind — a period's close, an advance, a threshold (reason) — in the caller's
 * transaction: the invoices written once (a re-run skips what its reason already has), then the issue's tail.
 */
export async function issueInvoices(
  deps: Pick<BillingDeps, 'numberPrefix' | 'hostedLinks'>,
  client: PgClient,
  reason: InvoiceReason,
  invoices: InvoiceToIssue[],
  now: Date,
  parts: IssueParts,
): Promise<ClosedInvoice[]> {
  const written = await insertInvoices(client, reason, invoices, now);
  return completeIssue(
    deps,
    client,
    invoices.filter((v) => written.has(v.id)),
    now,
    parts,
  );
}

/**
 * The tail every issue shares (issueInvoices; a draft's finalization, drafts.ts, after it updated its row): the
 * credit taken, the excess granted, the lines, `invoice.created` (and `invoice.paid` when nothing is to charge) for
 * the finalized ones — the outbox publishes them if and only if the transaction commits — and, last, the gapless
 * numbers, so the series' row lock is held only for the commit. Open invoices carry their first payment attempt
 * (written with the row); the billing run's payment step charges them.
 */
export async function completeIssue(
  deps: Pick<BillingDeps, 'numberPrefix' | 'hostedLinks'>,
  client: PgClient,
  invoices: InvoiceToIssue[],
  now: Date,
  parts: IssueParts,
): Promise<ClosedInvoice[]> {
  const written = new Set(invoices.map((v) => v.id));
  await recordCreditUses(
    client,
    parts.creditUses.filter((u) => written.has(u.invoice_id)),
  );
  if (parts.excess) await writeExcessGrants(client, parts.excess, written);
  await insertInvoiceLines(
    client,
    invoices.flatMap((v) => v.priced.lines.map((l, position) => ({ invoice_id: v.id, position, ...l }))),
  );
  const finalized = invoices.flatMap((v) => (v.status === 'draft' ? [] : [{ ...v, status: v.status }]));
  await appendEvents(
    client,
    // The link a new invoice is issued with (generation 0): where the customer sees and pays it.
    finalized.flatMap((v) => issuedEvents(v, v.status, hostedUrl(deps.hostedLinks, v.id))),
  );
  await parts.beforeNumbering?.();
  await numberDocuments(
    client,
    'invoices',
    finalized.map((v) => v.id),
    deps.numberPrefix,
    now,
  );
  return invoices.map((v) => ({
    id: v.id,
    customer_id: v.customer_id,
    subscription_id: v.subscription_id,
    amount: v.amount,
    currency: v.currency,
    status: v.status,
  }));
}

const hostedUrl = (links: HostedLinks | undefined, invoiceId: string) =>
  links ? hostedInvoiceUrl(links.key, links.baseUrl, invoiceId) : undefined;
