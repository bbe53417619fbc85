import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { INVOICE_REASONS, LINE_TYPES } from '../vocabulary.js';
import { INVOICE_STATUSES, PAYMENT_ATTEMPT_STATUSES } from '../vocabulary.js';

const Money = (description: string) =>
  Type.Number({ description: `${description}; an exact decimal written as a JSON number` });
const Day = (description: string) =>
  Type.String({ format: 'date', description: `${description} (YYYY-MM-DD, UTC, inclusive)` });

export const InvoiceLineSchema = Type.Object(
  {
    type: Type.Enum([...LINE_TYPES], {
      description:
        "flat: a flat item; usage: a usage-priced item (metered, tiered, package); minimum_commitment: the true-up to an item's minimum; credit: prepaid credit applied (negative); adjustment: usage of an earlier invoiced period that changed since, re-priced at that period's rates; one_off: a line an operator added to the draft; tax: the tax at one rate (tax_rate_id); deduction: what a threshold invoice of the period already billed (adjusts_invoice_id names it; negative); discount: a coupon's discount on a product's charges (coupon_id names it; negative; with adjusts_invoice_id: on the late usage of that invoice's period)",
    }),
    product_id: Type.Union([Type.String(), Type.Null()], { description: 'null on credit lines' }),
    meter_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the meter whose usage is the quantity (usage-priced products); null for flat ones',
    }),
    description: Type.String({
      description:
        'what the line bills; usage lines show the tier or package breakdown, adjustments the period they belong to',
    }),
    quantity: Money('units billed (adjustments: the change in units)'),
    unit_price: Money('price per unit, up to 9 decimals (package: per package; tiered: the last tier reached)'),
    amount: Money(
      "rounded half away from zero to the currency's minor unit: quantity × unit_price for flat and metered lines; by the price model (see description) for tiered and package lines",
    ),
    adjusts_invoice_id: Type.Optional(
      Type.String({
        description:
          'adjustment lines: the invoice of the period the usage belongs to; deduction lines: the threshold invoice deducted',
      }),
    ),
    coupon_id: Type.Optional(Type.String({ description: 'discount lines: the coupon (coupon_…)' })),
    tax_rate_id: Type.Optional(Type.String({ description: 'tax lines: the rate (txr_…)' })),
    tax_amount: Type.Optional(
      Money(
        'tax lines: the tax at the rate (Σ of each taxed line’s tax, rounded per line); `amount` is what the line adds to the total — the same for an exclusive rate, 0 for an inclusive one (the tax is inside the lines it taxes)',
      ),
    ),
    dimensions: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), {
        description:
          'usage and adjustment lines of an item with group_by: the group of dimension values the line bills (null: records without that dimension), e.g. {"model": "gpt-x"}',
      }),
    ),
  },
  { additionalProperties: false },
);

export const PaymentErrorSchema = Type.Object(
  {
    code: Type.Enum([
      'card_declined',
      'insufficient_funds',
      'expired_card',
      'authentication_required',
      'processing_error',
      'no_payment_method',
    ]),
    message: Type.String(),
    decline_code: Type.Optional(
      Type.String({
        description: "the issuer's reason as Stripe reports it (`insufficient_funds`, `generic_decline`…)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const InvoiceSchema = Type.Object(
  {
    id: Type.String({ examples: ['inv_7dK2pQ9xR1mV4sT8bN3cJ0'] }),
    number: Type.Union(
      [
        Type.String({
          pattern: '^[A-Za-z0-9_./#-]*$',
          examples: ['ML-2026-000042'],
        }),
        Type.Null(),
      ],
      {
        description:
          'the invoice number printed on its PDF: INVOICE_NUMBER_PREFIX and at least six digits of one gapless series for the deployment, shared with credit notes, given when the invoice is finalized (never reused, never skipped); null while it is a draft',
      },
    ),
    customer_id: Type.String({ description: 'cus_…' }),
    subscription_id: Type.Union([Type.String(), Type.Null()], {
      description: 'sub_…; null for a top-up invoice (reason top_up), which bills prepaid credit, no subscription',
    }),
    status: Type.Enum([...INVOICE_STATUSES]),
    reason: Type.Enum([...INVOICE_REASONS], {
      description:
        'period: the period’s invoice; threshold: issued during the period when its amount due reached the subscription’s billing_threshold (progressive billing), deducted by the period’s later invoices; advance: a billing period longer than a month began, its flat items billed for it in advance (its metered items are billed per month, reason period); top_up: prepaid credit bought (POST /v1/credit_top_ups, auto-recharge), granted once paid',
    }),
    currency: Type.String({ description: 'ISO 4217, upper case' }),
    subtotal: Money(
      'Σ of every line but tax and prepaid credit (charges, one-offs, discounts, deductions), inclusive tax inside',
    ),
    tax: Money('Σ of the tax at every rate, included or added (0 for an exempt or reverse-charge customer)'),
    amount: Money('the total: the sum of the lines exactly (subtotal + exclusive tax − prepaid credit)'),
    amount_credited: Money('what credit notes took off the invoice (GET /v1/billing/credit-notes?invoice_id=…)'),
    amount_due: Money(
      'what is still to be paid: amount − amount_credited while open or uncollectible (what the next payment attempt charges), 0 once paid or void',
    ),
    period_start: Day('first day billed'),
    period_end: Day('last day billed'),
    due_date: Type.String({
      format: 'date',
      description:
        'the issue date (UTC) + the customer’s net_terms_days: the first automatic payment attempt runs then and dunning counts from it',
    }),
    tax_exempt: Type.Enum(['none', 'exempt', 'reverse'], {
      description: 'the customer’s tax exemption when the invoice was created (reverse: reverse charge, no tax)',
    }),
    lines: Type.Array(InvoiceLineSchema),
    attempt_count: Type.Integer({ minimum: 0, description: 'payment attempts so far' }),
    next_payment_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'when the next automatic payment attempt runs (at the due date, then 1, 3 and 5 days after it); null when none is planned',
    }),
    last_payment_error: Type.Union([PaymentErrorSchema, Type.Null()], {
      description: 'why the last automatic attempt failed',
    }),
    payment_attempt_status: Type.Union([Type.Enum([...PAYMENT_ATTEMPT_STATUSES]), Type.Null()], {
      description:
        'the latest payment attempt (docs/payments.md): pending (the processor being called); unknown (called, its answer lost: the charge may have been made, and it is settled from the processor’s record by the next billing run or a webhook, never charged again under a new attempt; the invoice can be neither voided nor credited meanwhile); requires_action (the customer must authenticate, 3-D Secure); succeeded; failed. null: no attempt yet',
    }),
    dispute_status: Type.Union([Type.String(), Type.Null()], {
      description:
        'a dispute (chargeback) of the payment as Stripe reports it: warning_needs_response, needs_response, under_review while open; won or lost once closed (events invoice.disputed, invoice.dispute_closed). null: never disputed',
    }),
    created_at: Type.String({ format: 'date-time' }),
    paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    emailed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        "when the SMTP server accepted the invoice's email to the customer's billing email (docs/emails.md); null until then, and when no email is sent (no SMTP_URL, no billing email)",
    }),
    hosted_invoice_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description:
        'the hosted invoice page (docs/payments.md "Hosted pages"): the invoice and, while it is open, a Pay form; no sign-in — the link itself is the secret. null for a draft or once an operator revoked the link',
    }),
  },
  { additionalProperties: false },
);
export const InvoiceListSchema = listOf(InvoiceSchema);

export const ListInvoicesQuery = Type.Object(
  {
    ...PaginationQuery,
    status: Type.Optional(Type.Enum([...INVOICE_STATUSES], { description: 'only invoices in this status' })),
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'operators (admin): that customer’s invoices; any other token may name only itself',
      }),
    ),
    scope: Type.Optional(
      Type.Literal('deployment', {
        description:
          'operators (admin): every customer’s invoices at once (customer_id narrows it); any other token → 403',
      }),
    ),
    period_from: Type.Optional(
      Type.String({
        format: 'date',
        description: 'only invoices whose period ends on or after this date (YYYY-MM-DD)',
      }),
    ),
    period_to: Type.Optional(
      Type.String({
        format: 'date',
        description: 'only invoices whose period starts on or before this date (YYYY-MM-DD)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListInvoicesQuery = Type.Static<typeof ListInvoicesQuery>;

/** GET /v1/billing/invoices/upcoming?subscription_id=…|customer_id=… */
export const UpcomingInvoiceQuery = Type.Object(
  {
    subscription_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'sub_… of the caller (an operator’s: of any customer); required unless customer_id is given',
      }),
    ),
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'operators (admin): that customer’s upcoming invoice — of its one active subscription, or of subscription_id (which must be the customer’s); any other token may name only itself',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpcomingInvoiceQuery = Type.Static<typeof UpcomingInvoiceQuery>;

/** The upcoming invoice: the draft the current period would produce now (not stored). */
export const UpcomingInvoiceSchema = Type.Object(
  {
    id: Type.Null({ description: 'not stored: null' }),
    number: Type.Null({ description: 'given when the invoice is created: null' }),
    customer_id: Type.String(),
    subscription_id: Type.String(),
    status: Type.Literal('draft'),
    currency: Type.String(),
    subtotal: Money('Σ of every line but tax and prepaid credit'),
    tax: Money('Σ of the tax at every rate, included or added'),
    amount: Money('the sum of the lines'),
    period_start: Type.String({ format: 'date' }),
    period_end: Type.String({ format: 'date' }),
    lines: Type.Array(InvoiceLineSchema),
    attempt_count: Type.Literal(0),
    next_payment_attempt_at: Type.Null(),
    last_payment_error: Type.Null(),
    created_at: Type.String({
      format: 'date-time',
      description:
        'the instant the draft was computed (a clocked customer’s: its clock’s time); the period’s usage recorded so far counts',
    }),
    paid_at: Type.Null(),
  },
  { additionalProperties: false },
);

/** POST /v1/billing/invoices/{id}/lines: a one-off line on a draft (operators). */
export const AddInvoiceLineBody = Type.Object(
  {
    description: PrintableText({ maxLength: 500, description: 'what the line bills, as printed' }),
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          "the line's amount, > 0, with at most the currency's minor-unit decimals (instead of quantity and unit_price)",
      }),
    ),
    quantity: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, description: 'units (with unit_price, instead of amount)' }),
    ),
    unit_price: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          "price per unit, up to 9 decimals; quantity × unit_price is rounded half away from zero to the currency's minor unit",
      }),
    ),
  },
  { additionalProperties: false },
);
export type AddInvoiceLineBody = Type.Static<typeof AddInvoiceLineBody>;
