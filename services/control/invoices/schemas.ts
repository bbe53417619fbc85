import Type from 'typebox';
import { PaginationQuery, listOf } from '../../../shared/http/pagination.js';
import { JsonDecimal } from '../../../shared/money/json.js';
import { Decimal, canonicalDecimal } from '../../../shared/money/decimal.js';
import { LINE_TYPES, type LineType } from '../../billing/invoice-lines.js';

export const INVOICE_STATUSES = ['open', 'paid', 'uncollectible', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

const Money = (description: string) =>
  Type.Number({ description: `${description}; an exact decimal written as a JSON number` });
const Day = (description: string) =>
  Type.String({ format: 'date', description: `${description} (YYYY-MM-DD, UTC, inclusive)` });

export const InvoiceLineSchema = Type.Object(
  {
    type: Type.Enum([...LINE_TYPES], {
      description:
        "flat: a flat item; usage: a usage-priced item (metered, tiered, package); minimum_commitment: the true-up to an item's minimum; credit: prepaid credit applied (negative); adjustment: usage of an earlier invoiced period that changed since, re-priced at that period's rates",
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
      Type.String({ description: 'adjustment lines: the invoice of the period the usage belongs to' }),
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
    code: Type.Enum(['card_declined', 'insufficient_funds', 'processing_error', 'no_payment_method']),
    message: Type.String(),
  },
  { additionalProperties: false },
);

export const InvoiceSchema = Type.Object(
  {
    id: Type.String({ examples: ['inv_7dK2pQ9xR1mV4sT8bN3cJ0'] }),
    customer_id: Type.String({ description: 'cus_…' }),
    subscription_id: Type.String({ description: 'sub_…' }),
    status: Type.Enum([...INVOICE_STATUSES]),
    currency: Type.String({ description: 'ISO 4217, upper case' }),
    amount: Money('the sum of the lines'),
    amount_credited: Money('what credit notes took off the invoice (GET /v1/billing/credit-notes?invoice_id=…)'),
    amount_due: Money(
      'what is still to be paid: amount − amount_credited while open or uncollectible (what the next payment attempt charges), 0 once paid or void',
    ),
    period_start: Day('first day billed'),
    period_end: Day('last day billed'),
    lines: Type.Array(InvoiceLineSchema),
    attempt_count: Type.Integer({ minimum: 0, description: 'payment attempts so far' }),
    next_payment_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'when the next automatic payment attempt runs (1, 3 and 5 days after creation); null when none is planned',
    }),
    last_payment_error: Type.Union([PaymentErrorSchema, Type.Null()], {
      description: 'why the last automatic attempt failed',
    }),
    created_at: Type.String({ format: 'date-time' }),
    paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
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
  },
  { additionalProperties: false },
);
export type ListInvoicesQuery = Type.Static<typeof ListInvoicesQuery>;

/** invoices row; NUMERIC as text (exact), dates as YYYY-MM-DD text (no time-zone shift through JS Date). */
export interface InvoiceRow {
  id: string;
  account_id: string;
  customer_id: string;
  subscription_id: string;
  status: InvoiceStatus;
  currency: string;
  amount: string;
  amount_credited: string;
  period_start: string;
  period_end: string;
  attempt_count: number;
  next_payment_attempt_at: Date | null;
  last_payment_error: { code: string; message: string } | null;
  created_at: Date;
  paid_at: Date | null;
}

export interface InvoiceLineRow {
  invoice_id: string;
  position: number;
  type: LineType;
  product_id: string | null;
  meter_id: string | null;
  adjusts_invoice_id: string | null;
  /** Lines of a grouped item: the group's dimension values. */
  dimensions?: Record<string, string | null> | null;
  description: string;
  quantity: string;
  unit_price: string;
  amount: string;
}

export interface InvoiceWithLines {
  invoice: InvoiceRow;
  lines: InvoiceLineRow[];
}

/** What is still to be paid on an invoice: its amount less credit notes while unpaid; nothing once paid or void. */
export function amountDue(r: Pick<InvoiceRow, 'status' | 'amount' | 'amount_credited'>): string {
  return r.status === 'open' || r.status === 'uncollectible'
    ? canonicalDecimal(new Decimal(r.amount).minus(r.amount_credited))
    : '0';
}

/** The API representation; money goes out as exact JSON numbers (every reply serializes them: shared/http/reply.ts). */
export function toInvoice({ invoice: r, lines }: InvoiceWithLines) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    subscription_id: r.subscription_id,
    status: r.status,
    currency: r.currency,
    amount: new JsonDecimal(r.amount),
    amount_credited: new JsonDecimal(r.amount_credited),
    amount_due: new JsonDecimal(amountDue(r)),
    period_start: r.period_start,
    period_end: r.period_end,
    lines: lines.map(toInvoiceLine),
    attempt_count: r.attempt_count,
    next_payment_attempt_at: r.next_payment_attempt_at ? r.next_payment_attempt_at.toISOString() : null,
    last_payment_error: r.last_payment_error,
    created_at: r.created_at.toISOString(),
    paid_at: r.paid_at ? r.paid_at.toISOString() : null,
  };
}

/** A line on the wire (stored invoices and the upcoming one); money as exact JSON numbers. */
export function toInvoiceLine(
  l: Pick<
    InvoiceLineRow,
    | 'type'
    | 'product_id'
    | 'meter_id'
    | 'description'
    | 'quantity'
    | 'unit_price'
    | 'amount'
    | 'adjusts_invoice_id'
    | 'dimensions'
  >,
) {
  return {
    type: l.type,
    product_id: l.product_id,
    meter_id: l.meter_id,
    description: l.description,
    quantity: new JsonDecimal(l.quantity),
    unit_price: new JsonDecimal(l.unit_price),
    amount: new JsonDecimal(l.amount),
    ...(l.adjusts_invoice_id ? { adjusts_invoice_id: l.adjusts_invoice_id } : {}),
    ...(l.dimensions ? { dimensions: l.dimensions } : {}),
  };
}
