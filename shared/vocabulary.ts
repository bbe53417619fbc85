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
export const LINE_TYPES = [
  'flat',
  'usage',
  'minimum_commitment',
  'credit',
  'adjustment',
  'one_off',
  'tax',
  'deduction',
  'discount',
] as const;
/** How long a coupon discounts a subscription (docs/coupons.md). */
export const COUPON_DURATIONS = ['once', 'repeating', 'forever'] as const;
export type CouponDuration = (typeof COUPON_DURATIONS)[number];
export const TAX_EXEMPT = ['none', 'exempt', 'reverse'] as const;
export type TaxExempt = (typeof TAX_EXEMPT)[number];
export type LineType = (typeof LINE_TYPES)[number];

/** draft: during the grace period with BILLING_DRAFTS (services/domain/billing/drafts.ts); the others are finalized. */
export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
/**
 * A payment attempt's state (docs/payments.md): pending (recorded, the processor being called), unknown (called, its
 * answer lost: settled by reconciliation or a webhook), requires_action (3-D Secure), succeeded, failed.
 */
export const PAYMENT_ATTEMPT_STATUSES = ['pending', 'unknown', 'requires_action', 'succeeded', 'failed'] as const;
export type PaymentAttemptStatus = (typeof PAYMENT_ATTEMPT_STATUSES)[number];
/**
 * Why an invoice was issued: its period ended, its period's amount due reached the billing threshold, or (advance) a
 * billing period longer than a month began and its flat items are billed for it in advance (docs/billing.md).
 */
export const INVOICE_REASONS = ['period', 'threshold', 'advance', 'top_up'] as const;
export type InvoiceReason = (typeof INVOICE_REASONS)[number];

export const CREDIT_NOTE_TYPES = ['credit', 'refund'] as const;
export type CreditNoteType = (typeof CREDIT_NOTE_TYPES)[number];

/** A subscription's billing interval (docs/billing.md "Billing periods"); interval_count multiplies it. */
export const BILLING_INTERVALS = ['day', 'week', 'month', 'quarter', 'year'] as const;
export type BillingInterval = (typeof BILLING_INTERVALS)[number];
/** calendar: whole calendar intervals; start: anniversary billing from the subscription's start (or trial end). */
export const BILLING_ANCHORS = ['calendar', 'start'] as const;
export type BillingAnchor = (typeof BILLING_ANCHORS)[number];

/** The events a webhook subscribes to (services/domain/events/outbox-store.ts appends them). */
export const EVENT_TYPES = [
  'invoice.created',
  'invoice.paid',
  'invoice.voided',
  'payment.failed',
  'invoice.payment_action_required',
  'invoice.disputed',
  'invoice.dispute_closed',
  'credit_note.created',
  'subscription.updated',
  'subscription.canceled',
  'subscription.trial_will_end',
  'meter.usage.recorded',
  'entitlement.exhausted',
  'alert.triggered',
  'export.completed',
  'checkout.session.completed',
  'credit.granted',
  'credit.expired',
  'credit.balance_low',
  'credit.top_up.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** When a plan migration moves its subscribers: at once (pro-rated), or at the end of each one's period. */
export const PLAN_MIGRATION_TIMINGS = ['now', 'period_end'] as const;
export type PlanMigrationTiming = (typeof PLAN_MIGRATION_TIMINGS)[number];

/** Entitlements (docs/entitlements.md): what a customer may use of a feature. */
export const ENTITLEMENT_TYPES = ['metered', 'boolean'] as const;
export type EntitlementType = (typeof ENTITLEMENT_TYPES)[number];
/** The period a metered entitlement's limit applies to; each starts again at zero (UTC, in the customer's time). */
export const ENTITLEMENT_PERIODS = ['billing_period', 'month', 'day'] as const;
export type EntitlementPeriod = (typeof ENTITLEMENT_PERIODS)[number];
/** block: no access once usage reaches the limit; allow: access always (the balance goes negative). */
export const ENTITLEMENT_OVERAGES = ['block', 'allow'] as const;
export type EntitlementOverage = (typeof ENTITLEMENT_OVERAGES)[number];
/** What an alert watches (docs/alerts.md): a meter's usage over the billing period, or the period's invoice amount. */
export const ALERT_METRICS = ['usage', 'amount'] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];

export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay', 'unknown'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

/** A webhook URL's longest accepted form (services/domain/webhooks/url-safety.ts checks it). */
export const MAX_URL_LENGTH = 2048;

/** Exports (docs/exports.md): what is exported, in which file format, how often a schedule runs, how far one got. */
export const EXPORT_KINDS = [
  'usage',
  'invoices',
  'invoice_lines',
  'payments',
  'credit_notes',
  'customers',
  'journal_entries',
] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const EXPORT_FORMATS = ['csv', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_INTERVALS = ['hourly', 'daily'] as const;
export type ExportInterval = (typeof EXPORT_INTERVALS)[number];
export const EXPORT_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];
