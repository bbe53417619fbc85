import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { TAX_EXEMPT } from '../vocabulary.js';

/** Tax rates (admin: the deployment's) and the legal details customers carry (docs/billing.md "Tax"). */
const Country = Type.String({
  pattern: '^[A-Za-z]{2}$',
  description: 'ISO 3166-1 alpha-2 country code, any case; returned upper case',
  examples: ['DE'],
});
const Text = (max: number, description: string) => PrintableText({ maxLength: max, description });

export const TaxRateSchema = Type.Object(
  {
    id: Type.String({ description: 'txr_…' }),
    name: Type.String({ description: 'printed on tax lines, e.g. "VAT"' }),
    percentage: Type.Number({ description: 'an exact decimal, 0–100' }),
    country: Type.Union([Type.String(), Type.Null()], {
      description: 'the default rate of customers in this country whose product names no rates',
    }),
    region: Type.Union([Type.String(), Type.Null()], { description: 'and only in this region of it' }),
    inclusive: Type.Boolean({ description: 'true: extracted from the line amounts; false: added to them' }),
    archived: Type.Boolean({ description: 'archived rates no longer tax new invoices' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const TaxRateListSchema = listOf(TaxRateSchema);

export const CreateTaxRateBody = Type.Object(
  {
    name: Text(100, 'printed on tax lines'),
    percentage: Type.Number({
      minimum: 0,
      maximum: 100,
      description: 'exact decimal, at most 4 decimal places (20, 19, 7.7)',
    }),
    country: Type.Optional(Country),
    region: Type.Optional(Text(100, 'a region of `country` (state, province); requires country')),
    inclusive: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type CreateTaxRateBody = Type.Static<typeof CreateTaxRateBody>;

export const ListTaxRatesQuery = Type.Object(
  {
    ...PaginationQuery,
    archived: Type.Optional(Type.Enum(['true', 'false'], { description: 'archived rates (default false)' })),
  },
  { additionalProperties: false },
);
export type ListTaxRatesQuery = Type.Static<typeof ListTaxRatesQuery>;

// ── a customer's legal details and terms ──

export const LegalAddressSchema = Type.Object(
  {
    line1: Text(200, 'street and number'),
    line2: Type.Optional(Text(200, 'further address line')),
    city: Text(200, 'city'),
    postal_code: Text(32, 'postal code'),
    region: Type.Optional(Text(100, 'state, province or region (selects regional tax rates)')),
    country: Country,
  },
  { additionalProperties: false },
);
export type LegalAddress = Type.Static<typeof LegalAddressSchema>;

export const TaxIdSchema = Type.Object(
  {
    type: Type.String({
      pattern: '^[a-z][a-z0-9_]{1,31}$',
      description: 'the kind of id, lower case: eu_vat, gb_vat, us_ein, ch_vat…',
      examples: ['eu_vat'],
    }),
    value: Text(64, 'the id as registered, e.g. DE123456789'),
  },
  { additionalProperties: false },
);

export const TaxIds = Type.Array(TaxIdSchema, { maxItems: 10, description: 'printed on invoices' });
export const TaxExempt = Type.Enum([...TAX_EXEMPT], {
  description:
    'none: taxed; exempt: no tax; reverse: reverse charge — no tax, the invoice prints the reverse-charge note',
});
export const NetTermsDays = Type.Integer({
  minimum: 0,
  maximum: 365,
  description: 'days from an invoice’s issue to its due date (default 0: due when issued); dunning counts from it',
});

/** The legal fields of a customer, as created, changed and shown. */
export const legalFields = {
  legal_name: Text(200, 'the registered name printed on invoices (default: none; the PDF prints `name`)'),
  address: LegalAddressSchema,
  tax_ids: TaxIds,
  tax_exempt: TaxExempt,
  net_terms_days: NetTermsDays,
  locale: Type.Enum(['en', 'de', 'fr', 'es', 'ja'], {
    description:
      'the language of its invoice PDFs — their fixed texts, and amounts and dates formatted for it (en: 1,234.50 and ISO dates; de: 1.234,50 and 31.10.2026 …); default en',
  }),
};
