import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { CREDIT_NOTE_TYPES } from '../vocabulary.js';

const Money = (description: string) =>
  Type.Number({ description: `${description}; an exact decimal written as a JSON number` });

const LineCredit = Type.Object(
  {
    line: Type.Integer({
      minimum: 0,
      description: "the invoice line credited: its index in the invoice's `lines` (0-based)",
    }),
    quantity: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          "units of the line credited, ≤ what is left of its quantity; credits that share of the line's amount (rounded to the minor unit)",
      }),
    ),
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          "money credited on the line, ≤ what is left of its amount, with at most the currency's minor-unit decimals",
      }),
    ),
  },
  { additionalProperties: false, description: 'exactly one of quantity or amount' },
);

export const CreateCreditNoteBody = Type.Object(
  {
    amount: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          "the credit, > 0, at most what is left of the invoice's amount, with at most the currency's minor-unit decimals",
      }),
    ),
    lines: Type.Optional(
      Type.Array(LineCredit, {
        minItems: 1,
        maxItems: 1000,
        description: 'credit given per invoice line (instead of amount)',
      }),
    ),
    reason: PrintableText({ maxLength: 500, description: 'why the credit is given; printed on the credit note' }),
  },
  { additionalProperties: false, description: 'exactly one of amount or lines' },
);
export type CreateCreditNoteBody = Type.Static<typeof CreateCreditNoteBody>;

export const CreditNoteLineSchema = Type.Object(
  {
    invoice_line: Type.Union([Type.Integer(), Type.Null()], {
      description: 'index of the invoice line credited; null for a note given as a plain amount',
    }),
    tax_of_line: Type.Optional(
      Type.Integer({
        description:
          'lines reversing tax (invoice_line is the invoice’s tax line): the invoice line whose tax it is, credited in the same note',
      }),
    ),
    description: Type.String(),
    quantity: Type.Union([Money('units credited'), Type.Null()], { description: 'null unless credited by quantity' }),
    amount: Money('credited'),
  },
  { additionalProperties: false },
);

export const CreditNoteSchema = Type.Object(
  {
    id: Type.String({ examples: ['cn_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    number: Type.String({
      pattern: '^[A-Za-z0-9_./#-]*$',
      description:
        "its number, printed on its PDF: INVOICE_NUMBER_PREFIX and at least six digits of the deployment's one gapless series, shared with invoices",
      examples: ['ML-2026-000043'],
    }),
    invoice_id: Type.String(),
    customer_id: Type.String({ description: 'cus_… of the invoice' }),
    type: Type.Enum([...CREDIT_NOTE_TYPES], {
      description:
        'credit: lowered what was owed on an unpaid invoice; refund: paid back part of a paid invoice to the card charged',
    }),
    currency: Type.String(),
    amount: Money('the sum of the lines'),
    tax: Money(
      'the invoice tax the note reverses, inside amount: per credited line its share of the line’s tax (exact to the minor unit; the whole tax once the whole line is credited); a plain amount: its share of the invoice’s tax',
    ),
    reason: Type.String(),
    lines: Type.Array(CreditNoteLineSchema),
    refund: Type.Union(
      [
        Type.Object(
          {
            status: Type.Enum(['pending', 'succeeded', 'failed'], {
              description:
                'pending: recorded, the processor not yet answered (completed by a retry or the next billing run)',
            }),
            id: Type.Union([Type.String(), Type.Null()], { description: "the processor's refund id once succeeded" }),
            failure_code: Type.Union([Type.String(), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'refund notes only' },
    ),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const CreditNoteListSchema = listOf(CreditNoteSchema);

export const ListCreditNotesQuery = Type.Object(
  {
    ...PaginationQuery,
    invoice_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'only the notes of this invoice' }),
    ),
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'operators (admin): that customer’s credit notes; any other token may name only itself',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListCreditNotesQuery = Type.Static<typeof ListCreditNotesQuery>;
