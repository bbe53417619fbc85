import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import type { PageRequest } from '../../../shared/http/pagination.js';
import { CURRENCY_CODE_MESSAGE, normalizeCurrency } from '../../../shared/money/currencies.js';
import { numberLiteralAt, numberLiteralsOf } from '../../../shared/money/json.js';
import { checkAmount, checkTiers } from './price-model-input.js';
import { checkCurrencyOptions } from './currency-options-input.js';
import { CreateProductBody, ListProductsQuery, UpdateProductBody } from '../../../shared/api/products.js';
import type { NewProduct, ProductChange } from '../../domain/products/types.js';

/**
 * Products' one validation place: each route's `input` parser. The JSON schema first (types, ranges,
 * unknown fields), then what a schema can't say: blank names, the price's exact digits, ISO 4217 membership.
 * Every failure is a ValidationError naming its fields; handlers receive only valid, typed input.
 */
const createBody = bodyValidator<CreateProductBody>(CreateProductBody);
const updateBody = bodyValidator<UpdateProductBody>(UpdateProductBody);
const listQuery = queryValidator<ListProductsQuery>(ListProductsQuery);

export const parseListProducts = (ctx: RequestContext): PageRequest => listQuery.parseQuery(ctx.query);

/**
 * A product and its price model: `price` for every model but tiered (whose tiers carry the prices, 422 if
 * given), `tiers_mode` and `tiers` exactly for tiered, `package_size` exactly for package.
 */
export function parseNewProduct(ctx: RequestContext): NewProduct {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const pricing = input.pricing ?? 'flat';
  const literal = numberLiteralsOf(ctx.rawBody);
  const amount = (path: (string | number)[], opts: { positive?: boolean } = {}) =>
    checkAmount(literal(path), path, errors, opts);
  const name = checkName(input.name, errors)!;
  const currency = checkCurrency(input.currency, errors);
  const only = (field: 'tiers' | 'tiers_mode' | 'package_size', model: string) => {
    if (input[field] !== undefined && pricing !== model)
      errors.push({ field, message: `is only for ${model} pricing` });
  };
  only('tiers', 'tiered');
  only('tiers_mode', 'tiered');
  only('package_size', 'package');
  let price = '0';
  if (pricing === 'tiered') {
    if (input.price !== undefined)
      errors.push({ field: 'price', message: 'must be omitted for tiered pricing: the tiers carry the prices' });
  } else if (input.price === undefined) errors.push({ field: 'price', message: 'is required' });
  else price = amount(['price']) ?? '0';
  const product: NewProduct = { name, price, currency, pricing };
  const options = checkCurrencyOptions(input.currency_options, literal, errors, { currency, pricing });
  if (options) product.currency_options = options;
  if (input.tax_rate_ids) product.tax_rate_ids = input.tax_rate_ids;
  if (input.allow_customer_meters !== undefined) product.allow_customer_meters = input.allow_customer_meters;
  if (pricing === 'tiered') {
    if (!input.tiers_mode) errors.push({ field: 'tiers_mode', message: 'is required for tiered pricing' });
    if (!input.tiers) errors.push({ field: 'tiers', message: 'is required for tiered pricing' });
    else product.tiers = checkTiers(input.tiers, amount, errors);
    product.tiers_mode = input.tiers_mode;
  }
  if (pricing === 'package') {
    if (input.package_size === undefined)
      errors.push({ field: 'package_size', message: 'is required for package pricing' });
    else product.package_size = amount(['package_size'], { positive: true });
  }
  throwIfAny(errors);
  return product;
}

export function parseProductChange(ctx: RequestContext): ProductChange {
  const input = updateBody.parse(ctx.body);
  if (
    input.name === undefined &&
    input.price === undefined &&
    input.currency_options === undefined &&
    input.tax_rate_ids === undefined &&
    input.allow_customer_meters === undefined
  )
    throw new ValidationError([
      { field: '', message: 'must contain name, price, currency_options, tax_rate_ids or allow_customer_meters' },
    ]);
  const errors: FieldError[] = [];
  const name = checkName(input.name, errors);
  const price = checkPrice(ctx, input.price !== undefined, errors);
  const currency_options = checkCurrencyOptions(input.currency_options, numberLiteralsOf(ctx.rawBody), errors, {});
  throwIfAny(errors);
  return {
    name,
    price,
    currency_options,
    tax_rate_ids: input.tax_rate_ids,
    allow_customer_meters: input.allow_customer_meters,
  };
}

function checkName(name: string | undefined, errors: FieldError[]): string | undefined {
  if (name === undefined) return undefined;
  const trimmed = name.trim();
  if (!trimmed) errors.push({ field: 'name', message: 'must not be blank' });
  return trimmed;
}

/** The price exactly as the client wrote it. */
function checkPrice(ctx: RequestContext, present: boolean, errors: FieldError[]): string | undefined {
  if (!present) return undefined;
  return checkAmount(numberLiteralAt(ctx.rawBody, 'price'), ['price'], errors);
}

function checkCurrency(code: string, errors: FieldError[]): string {
  const c = normalizeCurrency(code);
  if (!c) errors.push({ field: 'currency', message: CURRENCY_CODE_MESSAGE });
  return c ?? code;
}

function throwIfAny(errors: FieldError[]): void {
  if (errors.length) throw new ValidationError(errors);
}
