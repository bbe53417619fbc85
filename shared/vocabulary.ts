/**
 * The closed sets of values the public API and the domain share: what a client may send and read, and what
 * the domain stores. The API's schemas (shared/api/) enumerate them, the domain (services/domain/) branches
 * on them, the console shows them; each is written here once. No imports: the console bundles this file.
 */

/** A product's price model (services/domain/pricing/price-models.ts prices each). */
export const PRICINGS = ['flat', 'metered', 'tiered', 'package'] as const;
export type Pricing = (typeof PRICINGS)[number];
export const TIERS_MODES = ['graduated', 'volume'] as const;
export type TiersMode = (typeof TIERS_MODES)[number];

/** What an invoice line bills (services/domain/pricing/invoice-lines.ts). */
export const LINE_TYPES = ['flat', 'usage', 'minimum_commitment', 'credit', 'adjustment', 'one_off', 'tax'] as const;
export const TAX_EXEMPT = ['none', 'exempt', 'reverse'] as const;
export type TaxExempt = (typeof TAX_EXEMPT)[number];
export type LineType = (typeof LINE_TYPES)[number];

/** draft: during the grace period with BILLING_DRAFTS (services/domain/billing/drafts.ts); the others are finalized. */
export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const CREDIT_NOTE_TYPES = ['credit', 'refund'] as const;
export type CreditNoteType = (typeof CREDIT_NOTE_TYPES)[number];

/** The events a webhook subscribes to (services/domain/events/outbox-store.ts appends them). */
export const EVENT_TYPES = [
  'invoice.created',
  'invoice.paid',
  'invoice.voided',
  'payment.failed',
  'credit_note.created',
  'subscription.updated',
  'meter.usage.recorded',
  'alert.triggered',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What an alert watches (docs/alerts.md): a meter's usage over the billing period, or the period's invoice amount. */
export const ALERT_METRICS = ['usage', 'amount'] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];

export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay', 'unknown'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

/** A webhook URL's longest accepted form (services/domain/webhooks/url-safety.ts checks it). */
export const MAX_URL_LENGTH = 2048;
