import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { hasControlCharacter, looksLikeEmail } from '../../../shared/strings.js';
import type { BillingAddress } from '../../domain/billing-info/types.js';
import type { CustomerChange, LegalDetails, NewCustomer, NewSignIn } from '../../domain/customers/types.js';
import type { LegalAddress, TaxId } from '../../domain/tax/types.js';
import { isCountryCode } from '../../../shared/countries.js';
import { CURRENCY_CODE_MESSAGE, normalizeCurrency } from '../../../shared/money/currencies.js';
import {
  CreateCustomerBody,
  CreateSignInBody,
  ListCustomersQuery,
  UpdateCustomerBody,
} from '../../../shared/api/customers.js';

/** Customers' one validation place: the schemas, then what they can't say (blank, control characters, emails). */
const createBody = bodyValidator<CreateCustomerBody>(CreateCustomerBody);
const updateBody = bodyValidator<UpdateCustomerBody>(UpdateCustomerBody);
const listQuery = queryValidator<ListCustomersQuery>(ListCustomersQuery);
const signInBody = bodyValidator<CreateSignInBody>(CreateSignInBody);

/** THE external id rule (API, CLI): 1–128 printable characters, not only spaces. */
export function externalIdProblem(id: string): string | undefined {
  if (id.length === 0 || id.length > 128) return 'must be 1–128 characters';
  if (hasControlCharacter(id)) return 'must be printable characters (no control characters)';
  if (id.trim() === '') return 'must not be blank';
  return undefined;
}

function checkExternalId(id: string, errors: FieldError[], field = 'external_id'): string {
  const problem = externalIdProblem(id);
  if (problem) errors.push({ field, message: problem });
  return id;
}

function checkName(name: string, errors: FieldError[]): string {
  const trimmed = name.trim();
  if (!trimmed) errors.push({ field: 'name', message: 'must not be blank' });
  return trimmed;
}

export function checkEmail(email: string, errors: FieldError[], field = 'email'): string {
  const trimmed = email.trim();
  if (!looksLikeEmail(trimmed)) errors.push({ field, message: 'must be an email address' });
  return trimmed;
}

function checkAddress(a: BillingAddress, errors: FieldError[]): BillingAddress {
  for (const k of ['line1', 'city', 'state', 'zip'] as const)
    if (a[k].trim() === '') errors.push({ field: `billing_address.${k}`, message: 'must not be blank' });
  return a;
}

function checkMetadata(m: Record<string, string>, errors: FieldError[]): Record<string, string> {
  for (const k of Object.keys(m))
    if (hasControlCharacter(k) || k.trim() === '')
      errors.push({ field: `metadata.${k}`, message: 'keys must be printable and not blank' });
  return m;
}

/** THE legal address rule (customers, the seller): blank lines, a country ISO 3166-1 does not have (upper-cased), control characters. */
export function checkLegalAddress(a: LegalAddress, errors: FieldError[]): LegalAddress {
  const out: LegalAddress = { ...a, country: a.country.toUpperCase() };
  for (const k of ['line1', 'line2', 'city', 'postal_code', 'region'] as const) {
    const v = a[k];
    if (v === undefined) continue;
    if (v.trim() === '') errors.push({ field: `address.${k}`, message: 'must not be blank' });
    else if (hasControlCharacter(v)) errors.push({ field: `address.${k}`, message: 'must be printable characters' });
    out[k] = v.trim();
  }
  if (!isCountryCode(out.country))
    errors.push({ field: 'address.country', message: 'must be an ISO 3166-1 alpha-2 country code (DE, FR, US…)' });
  return out;
}

export function checkTaxIds(ids: TaxId[], errors: FieldError[]): TaxId[] {
  return ids.map((t, i) => {
    const value = t.value.trim();
    if (!value || hasControlCharacter(value))
      errors.push({ field: `tax_ids[${i}].value`, message: 'must be printable and not blank' });
    return { type: t.type, value };
  });
}

/** The legal fields of a create or a PATCH (`null` clears legal_name and address). */
function checkLegal(
  input: {
    legal_name?: string | null;
    address?: LegalAddress | null;
    tax_ids?: TaxId[];
    tax_exempt?: LegalDetails['taxExempt'];
    net_terms_days?: number;
    locale?: LegalDetails['locale'];
  },
  errors: FieldError[],
): LegalDetails {
  const out: LegalDetails = {};
  if (input.legal_name !== undefined) {
    const name = input.legal_name?.trim() ?? null;
    if (name === '' || (name && hasControlCharacter(name)))
      errors.push({ field: 'legal_name', message: 'must be printable and not blank' });
    out.legalName = name;
  }
  if (input.address !== undefined)
    out.address = input.address === null ? null : checkLegalAddress(input.address, errors);
  if (input.tax_ids !== undefined) out.taxIds = checkTaxIds(input.tax_ids, errors);
  if (input.tax_exempt !== undefined) out.taxExempt = input.tax_exempt;
  if (input.net_terms_days !== undefined) out.netTermsDays = input.net_terms_days;
  if (input.locale !== undefined) out.locale = input.locale;
  return out;
}

function throwIfAny(errors: FieldError[]): void {
  if (errors.length) throw new ValidationError(errors);
}

export function parseNewCustomer(ctx: RequestContext): NewCustomer {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const out: NewCustomer = {
    name: checkName(input.name, errors),
    externalId: checkExternalId(input.external_id, errors),
    email: input.email === undefined ? null : checkEmail(input.email, errors),
    billingAddress: input.billing_address === undefined ? null : checkAddress(input.billing_address, errors),
    metadata: checkMetadata(input.metadata ?? {}, errors),
    legal: checkLegal(input, errors),
  };
  if (input.currency !== undefined) out.currency = checkCurrency(input.currency, errors);
  throwIfAny(errors);
  return out;
}

/** Price books: the customer's currency, an ISO 4217 code in any case (stored upper case). */
function checkCurrency(code: string, errors: FieldError[]): string {
  const c = normalizeCurrency(code);
  if (!c) errors.push({ field: 'currency', message: CURRENCY_CODE_MESSAGE });
  return c ?? code;
}

export function parseCustomerChange(ctx: RequestContext): CustomerChange {
  const input = updateBody.parse(ctx.body);
  if (Object.keys(input).length === 0)
    throw new ValidationError([
      {
        field: '',
        message:
          'must contain at least one of name, external_id, email, billing_address, metadata, legal_name, address, tax_ids, tax_exempt, net_terms_days, locale, currency',
      },
    ]);
  const errors: FieldError[] = [];
  const change: CustomerChange = { legal: checkLegal(input, errors) };
  if (input.name !== undefined) change.name = checkName(input.name, errors);
  if (input.external_id !== undefined)
    change.externalId = input.external_id === null ? null : checkExternalId(input.external_id, errors);
  if (input.email !== undefined) change.email = input.email === null ? null : checkEmail(input.email, errors);
  if (input.billing_address !== undefined)
    change.billingAddress = input.billing_address === null ? null : checkAddress(input.billing_address, errors);
  if (input.metadata !== undefined) change.metadata = checkMetadata(input.metadata, errors);
  if (input.currency !== undefined) change.currency = checkCurrency(input.currency, errors);
  throwIfAny(errors);
  return change;
}

export interface CustomerListRequest {
  page: number;
  per_page: number;
  externalId?: string;
}

export function parseListCustomers(ctx: RequestContext): CustomerListRequest {
  const q = listQuery.parseQuery(ctx.query);
  return { page: q.page, per_page: q.per_page, externalId: q.external_id };
}

export function parseNewSignIn(ctx: RequestContext): NewSignIn {
  const input = signInBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const email = checkEmail(input.email, errors);
  throwIfAny(errors);
  return { email, password: input.password };
}
