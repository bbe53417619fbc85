import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { BillingAddressSchema } from './billing-info.js';
import { CURRENCY_CODE_MESSAGE, CURRENCY_CODE_PATTERN } from '../money/currencies.js';
import { LegalAddressSchema, NetTermsDays, TaxExempt, TaxIds, legalFields } from './tax.js';

/**
 * A customer (docs/design.md §6, operator mode): an account as the operator manages it over the API. Its `id`
 * is the account's `cus_` id; `account_id` the account itself (what tokens, usage rows and limits name).
 */
export const EXTERNAL_ID_MAX = 128;
export const METADATA_LIMITS = { maxKeys: 50, maxKeyLength: 40, maxValueLength: 500 } as const;

export const ExternalId = Type.String({
  minLength: 1,
  maxLength: EXTERNAL_ID_MAX,
  description:
    'the operator’s own id for the customer: 1–128 printable characters (no control characters), unique in the deployment; usage records name their customer by it (`customer`)',
});
const Name = PrintableText({ maxLength: 200 });
/** Price books (docs/plans.md "Price books"). */
const CustomerCurrency = Type.String({
  pattern: CURRENCY_CODE_PATTERN,
  errorMessage: CURRENCY_CODE_MESSAGE,
  description:
    'ISO 4217 (any case; returned upper case): the price book its subscriptions are priced from; fixed by its first subscription when not set, and unchangeable once it has one (409 customer_currency_locked)',
});
const Email = Type.String({ minLength: 3, maxLength: 320, description: 'billing contact' });
const Metadata = Type.Record(
  Type.String({ minLength: 1, maxLength: METADATA_LIMITS.maxKeyLength }),
  Type.String({ maxLength: METADATA_LIMITS.maxValueLength }),
  {
    maxProperties: METADATA_LIMITS.maxKeys,
    description: `string → string, at most ${METADATA_LIMITS.maxKeys} keys of ≤ ${METADATA_LIMITS.maxKeyLength} characters, values ≤ ${METADATA_LIMITS.maxValueLength}`,
  },
);

export const CustomerSchema = Type.Object(
  {
    id: Type.String({ description: 'cus_…', examples: ['cus_4kQ9sP2xR7mV1rT8bN3cJ0'] }),
    account_id: Type.String({ description: 'acct_… — the account this customer is' }),
    external_id: Type.Union([Type.String(), Type.Null()], {
      description: 'null for accounts made with the CLI until an operator sets one',
    }),
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    billing_address: Type.Union([BillingAddressSchema, Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    legal_name: Type.Union([Type.String(), Type.Null()]),
    address: Type.Union([LegalAddressSchema, Type.Null()], {
      description: 'the legal address printed on invoices; its country selects the default tax rates',
    }),
    tax_ids: TaxIds,
    tax_exempt: TaxExempt,
    net_terms_days: NetTermsDays,
    locale: legalFields.locale,
    currency: Type.Union([Type.String(), Type.Null()], {
      description:
        'the price book its subscriptions are priced from; null until set or fixed by its first subscription',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const CustomerListSchema = listOf(CustomerSchema);

export const CreateCustomerBody = Type.Object(
  {
    name: Name,
    external_id: ExternalId,
    email: Type.Optional(Email),
    billing_address: Type.Optional(BillingAddressSchema),
    metadata: Type.Optional(Metadata),
    legal_name: Type.Optional(legalFields.legal_name),
    address: Type.Optional(legalFields.address),
    tax_ids: Type.Optional(legalFields.tax_ids),
    tax_exempt: Type.Optional(legalFields.tax_exempt),
    net_terms_days: Type.Optional(legalFields.net_terms_days),
    locale: Type.Optional(legalFields.locale),
    currency: Type.Optional(CustomerCurrency),
  },
  { additionalProperties: false },
);
export type CreateCustomerBody = Type.Static<typeof CreateCustomerBody>;

/** null clears email, billing_address or external_id; metadata is replaced as a whole. */
export const UpdateCustomerBody = Type.Object(
  {
    name: Type.Optional(Name),
    external_id: Type.Optional(Type.Union([ExternalId, Type.Null()])),
    email: Type.Optional(Type.Union([Email, Type.Null()])),
    billing_address: Type.Optional(Type.Union([BillingAddressSchema, Type.Null()])),
    metadata: Type.Optional(Metadata),
    legal_name: Type.Optional(Type.Union([legalFields.legal_name, Type.Null()])),
    address: Type.Optional(Type.Union([legalFields.address, Type.Null()])),
    tax_ids: Type.Optional(legalFields.tax_ids),
    tax_exempt: Type.Optional(legalFields.tax_exempt),
    net_terms_days: Type.Optional(legalFields.net_terms_days),
    locale: Type.Optional(legalFields.locale),
    currency: Type.Optional(CustomerCurrency),
  },
  { additionalProperties: false },
);
export type UpdateCustomerBody = Type.Static<typeof UpdateCustomerBody>;

export const ListCustomersQuery = Type.Object(
  { ...PaginationQuery, external_id: Type.Optional(ExternalId) },
  { additionalProperties: false },
);
export type ListCustomersQuery = Type.Static<typeof ListCustomersQuery>;

// ── sign-ins: users of a customer's account (the console and OAuth apps) ──

export const CreateSignInBody = Type.Object(
  {
    email: Email,
    password: Type.Optional(
      Type.String({ minLength: 8, maxLength: 1024, description: 'generated (and shown once) when omitted' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateSignInBody = Type.Static<typeof CreateSignInBody>;

export const SignInSchema = Type.Object(
  {
    id: Type.String({ description: 'usr_…' }),
    customer_id: Type.String(),
    email: Type.String(),
    password: Type.Optional(Type.String({ description: 'only in the 201 body, and only when it was generated' })),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const SignInListSchema = listOf(SignInSchema);
