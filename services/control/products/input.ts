import type { RequestContext } from '../../../shared/http/context.js';
import { ValidationError, type FieldError } from '../../../shared/errors.js';
import { bodyValidator, queryValidator } from '../../../shared/http/validation.js';
import type { PageRequest } from '../../../shared/http/pagination.js';
import { normalizeCurrency } from '../../../shared/money/currencies.js';
import { parseAmount } from '../../../shared/money/decimal.js';
import { numberLiteralAt } from '../../../shared/money/json.js';
import { CreateProductBody, ListProductsQuery, UpdateProductBody, type NewProduct, type ProductChange } from './schemas.js';

/**
 * Products' one validation place: each route's `input` parser. The JSON schema first (types, ranges,
 * unknown fields), then what a schema can't say: blank names, the price's exact digits, ISO 4217 membership.
 * Every failure is a ValidationError naming its fields; handlers receive only valid, typed input.
 */
const createBody = bodyValidator<CreateProductBody>(CreateProductBody);
const updateBody = bodyValidator<UpdateProductBody>(UpdateProductBody);
const listQuery = queryValidator<ListProductsQuery>(ListProductsQuery);

export const parseListProducts = (ctx: RequestContext): PageRequest => listQuery.parseQuery(ctx.query);

export function parseNewProduct(ctx: RequestContext): NewProduct {
  const input = createBody.parse(ctx.body);
  const errors: FieldError[] = [];
  const name = checkName(input.name, errors)!;
  const price = checkPrice(ctx, true, errors)!;
  const currency = checkCurrency(input.currency, errors);
  throwIfAny(errors);
  return { name, price, currency, pricing: input.pricing ?? 'flat' };
}

export function parseProductChange(ctx: RequestContext): ProductChange {
  const input = updateBody.parse(ctx.body);
  if (input.name === undefined && input.price === undefined) throw new ValidationError([{ field: '', message: 'must contain name or price' }]);
  const errors: FieldError[] = [];
  const name = checkName(input.name, errors);
  const price = checkPrice(ctx, input.price !== undefined, errors);
  throwIfAny(errors);
  return { name, price };
}

function checkName(name: string | undefined, errors: FieldError[]): string | undefined {
  if (name === undefined) return undefined;
  const trimmed = name.trim();
  if (!trimmed) errors.push({ field: 'name', message: 'must not be blank' });
  return trimmed;
}

/** The price exactly as the client wrote it (the schema already checked it is a number ≥ 0). */
function checkPrice(ctx: RequestContext, present: boolean, errors: FieldError[]): string | undefined {
  if (!present) return undefined;
  const literal = numberLiteralAt(ctx.rawBody, 'price');
  if (literal === undefined) {
    errors.push({ field: 'price', message: 'must be a number' });
    return undefined;
  }
  const r = parseAmount(literal);
  if ('error' in r) {
    errors.push({ field: 'price', message: r.error });
    return undefined;
  }
  return r.value;
}

function checkCurrency(code: string, errors: FieldError[]): string {
  const c = normalizeCurrency(code);
  if (!c) errors.push({ field: 'currency', message: 'must be an ISO 4217 currency code' });
  return c ?? code;
}

function throwIfAny(errors: FieldError[]): void {
  if (errors.length) throw new ValidationError(errors);
}
