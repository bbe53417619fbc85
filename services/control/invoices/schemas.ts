import Type from 'typebox';
import { PaginationQuery, listOf } from '../../../shared/http/pagination.js';
import { JsonDecimal } from '../../../shared/money/json.js';

export const INVOICE_STATUSES = ['open', 'paid', 'uncollectible', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

const Money = (description: string) => Type.Number({ description: `${description}; an exact decimal written as a JSON number` });
const Day = (description: string) => Type.String({ format: 'date', description: `${description} (YYYY-MM-DD, UTC, inclusive)` });

export const InvoiceLineSchema = Type.Object(
  {
    product_id: Type.String(),
    meter_id: Type.Union([Type.String(), Type.Null()], { description: 'the meter whose usage is the quantity (metered products); null for flat ones' }),
    description: Type.String(),
    quantity: Money('units billed'),
    unit_price: Money('price per unit, up to 9 decimals'),
    amount: Money("quantity × unit_price, rounded half away from zero to the currency's minor unit"),
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
    period_start: Day('first day billed'),
    period_end: Day('last day billed'),
    lines: Type.Array(InvoiceLineSchema),
    attempt_count: Type.Integer({ minimum: 0, description: 'payment attempts so far' }),
    next_payment_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the next automatic payment attempt runs (1, 3 and 5 days after creation); null when none is planned' }),
    last_payment_error: Type.Union([PaymentErrorSchema, Type.Null()], { description: 'why the last automatic attempt failed' }),
    created_at: Type.String({ format: 'date-time' }),
    paid_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);
export const InvoiceListSchema = listOf(InvoiceSchema);

export const ListInvoicesQuery = Type.Object(
  { ...PaginationQuery, status: Type.Optional(Type.Enum([...INVOICE_STATUSES], { description: 'only invoices in this status' })) },
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
  product_id: string;
  meter_id: string | null;
  description: string;
  quantity: string;
  unit_price: string;
  amount: string;
}

export interface InvoiceWithLines {
  invoice: InvoiceRow;
  lines: InvoiceLineRow[];
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
    period_start: r.period_start,
    period_end: r.period_end,
    lines: lines.map((l) => ({
      product_id: l.product_id,
      meter_id: l.meter_id,
      description: l.description,
      quantity: new JsonDecimal(l.quantity),
      unit_price: new JsonDecimal(l.unit_price),
      amount: new JsonDecimal(l.amount),
    })),
    attempt_count: r.attempt_count,
    next_payment_attempt_at: r.next_payment_attempt_at ? r.next_payment_attempt_at.toISOString() : null,
    last_payment_error: r.last_payment_error,
    created_at: r.created_at.toISOString(),
    paid_at: r.paid_at ? r.paid_at.toISOString() : null,
  };
}
