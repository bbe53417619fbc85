import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { hasControlCharacter, looksLikeEmail } from '../../../shared/strings.js';
import type { BillingAddress } from '../../domain/billing-info/types.js';
import type { CustomerChange, NewCustomer, NewSignIn } from '../../domain/customers/types.js';
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

function checkEmail(email: string, errors: FieldError[], field = 'email'): string {
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
  };
  throwIfAny(errors);
  return out;
}

export function parseCustomerChange(ctx: RequestContext): CustomerChange {
  const input = updateBody.parse(ctx.body);
  if (Object.keys(input).length === 0)
    throw new ValidationError([
      { field: '', message: 'must contain at least one of name, external_id, email, billing_address, metadata' },
    ]);
  const errors: FieldError[] = [];
  const change: CustomerChange = {};
  if (input.name !== undefined) change.name = checkName(input.name, errors);
  if (input.external_id !== undefined)
    change.externalId = input.external_id === null ? null : checkExternalId(input.external_id, errors);
  if (input.email !== undefined) change.email = input.email === null ? null : checkEmail(input.email, errors);
  if (input.billing_address !== undefined)
    change.billingAddress = input.billing_address === null ? null : checkAddress(input.billing_address, errors);
  if (input.metadata !== undefined) change.metadata = checkMetadata(input.metadata, errors);
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
