import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import { hasControlCharacter } from '../../../shared/strings.js';
import { isCountryCode } from '../../../shared/countries.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt } from '../../../shared/money/json.js';
import { CreateTaxRateBody, ListTaxRatesQuery } from '../../../shared/api/tax.js';
import type { NewTaxRate } from '../../domain/tax/types.js';

/** Tax rates' one validation place: the schema, then the exact percentage, the country, blank text. */
const createBody = bodyValidator<CreateTaxRateBody>(CreateTaxRateBody);
const listQuery = queryValidator<ListTaxRatesQuery>(ListTaxRatesQuery);

/** Percentages are exact to 4 decimal places (7.7, 8.875): enough for every published rate. */
export const PERCENTAGE_SCALE = 4;

function printableText(v: string, field: string, errors: FieldError[]): string {
  const t = v.trim();
  if (!t || hasControlCharacter(t)) errors.push({ field, message: 'must be printable and not blank' });
  return t;
}

export function parseNewTaxRate(ctx: RequestContext): NewTaxRate {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const name = printableText(input.name, 'name', errors);
  let percentage = '0';
  const literal = numberLiteralAt(ctx.rawBody, 'percentage');
  const parsed =
    literal === undefined ? { error: 'must be a number' } : parseAmount(literal, { maxScale: PERCENTAGE_SCALE });
  if ('error' in parsed) errors.push({ field: 'percentage', message: parsed.error });
  else percentage = parsed.value;
  const country = input.country?.toUpperCase() ?? null;
  if (country !== null && !isCountryCode(country))
    errors.push({ field: 'country', message: 'must be an ISO 3166-1 alpha-2 country code (DE, FR, US…)' });
  const region = input.region === undefined ? null : printableText(input.region, 'region', errors);
  if (region !== null && country === null) errors.push({ field: 'region', message: 'requires country' });
  if (errors.length) throw new ValidationError(errors);
  return { name, percentage, country, region, inclusive: input.inclusive };
}

export interface TaxRateListRequest {
  page: number;
  per_page: number;
  archived: boolean;
}

export function parseListTaxRates(ctx: RequestContext): TaxRateListRequest {
  const q = listQuery.parseQuery(ctx.query);
  return { page: q.page, per_page: q.per_page, archived: q.archived === 'true' };
}
