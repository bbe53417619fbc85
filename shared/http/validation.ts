import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { BadRequestError, ValidationError, type FieldError } from '../errors.js';
import { jsonValueKind } from '../strings.js';

// ajv-formats ships CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (
  ajv: Ajv,
) => Ajv;

const ajv = addFormats(
  new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true, verbose: true }),
);
const queryAjv = addFormats(
  new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true, verbose: true }),
);

/** `/card/number` → `card.number`; `/items/0/product_id` → `items[0].product_id`. */
function fieldOf(e: ErrorObject, prefix: string): string {
  let path = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
  const extra =
    (e.params as { missingProperty?: string; additionalProperty?: string }).missingProperty ??
    (e.params as { additionalProperty?: string }).additionalProperty;
  if (extra) path = path ? `${path}.${extra}` : extra;
  return prefix ? (path ? `${prefix}.${path}` : prefix) : path;
}

/** A JSON Schema type as a user reads it. */
const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a JSON number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'a JSON object',
  array: 'a JSON array',
  null: 'null',
};

/** Formats as a user reads them (ajv's own message names the format only). */
const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'an RFC 3339 string, e.g. 2026-11-21T10:00:00Z',
  date: 'a date YYYY-MM-DD',
  uri: 'an absolute URL',
  email: 'an email address',
};

/**
 * What a field must be, in the words of its schema: its `errorMessage` annotation (written where the rule
 * behind a pattern has a name: "must be a 3-letter ISO 4217 currency code"), else its format, else undefined.
 */
function schemaWords(schema: unknown): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const { errorMessage, format } = schema as { errorMessage?: unknown; format?: unknown };
  if (typeof errorMessage === 'string') return errorMessage;
  if (typeof format === 'string' && FORMAT_WORDS[format]) return `must be ${FORMAT_WORDS[format]}`;
  return undefined;
}

/** One ajv error as a user reads it: never a raw regex; a type error says what was expected and what came. */
function messageOf(e: ErrorObject): string {
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
    case 'type':
      return `${expectedOf(e)}, not ${jsonValueKind(e.data)}`;
    case 'pattern':
      return schemaWords(e.parentSchema) ?? `must match the pattern ${(e.params as { pattern: string }).pattern}`;
    case 'format':
      return schemaWords(e.parentSchema) ?? e.message ?? 'is invalid';
    default:
      return e.message ?? 'is invalid';
  }
}

/** "must be a JSON number", "must be an RFC 3339 string (…)": what a type error's schema wanted. */
function expectedOf(e: ErrorObject): string {
  const types = String((e.params as { type: string | string[] }).type).split(',');
  return schemaWords(e.parentSchema) ?? `must be ${types.map((t) => TYPE_WORDS[t] ?? t).join(' or ')}`;
}

export function toFieldErrors(errors: ErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  // A field refused by several branches of a union (a number, or null) says so once:
  // "must be a JSON number or null, not a string".
  const typeErrors = new Map<string, { error: FieldError; expected: string[] }>();
  for (const e of errors ?? []) {
    // anyOf/oneOf wrappers repeat what their branches said
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const field = fieldOf(e, prefix);
    const earlier = e.keyword === 'type' ? typeErrors.get(field) : undefined;
    if (earlier) {
      const more = expectedOf(e).replace(/^must be /, '');
      if (!earlier.expected.includes(more)) earlier.expected.push(more);
      earlier.error.message = `must be ${earlier.expected.join(' or ')}, not ${jsonValueKind(e.data)}`;
      continue;
    }
    const fe = { field, message: messageOf(e) };
    const key = fe.field + '\u0000' + fe.message;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
    if (e.keyword === 'type') typeErrors.set(field, { error: fe, expected: [expectedOf(e).replace(/^must be /, '')] });
  }
  return out;
}

export interface Validator<T> {
  schema: object;
  /** Returns the value typed, or throws ValidationError (422) naming each failing field. */
  parse(value: unknown): T;
  /** The compiled schema (compiled on first use). */
  readonly check: ValidateFunction;
}

/**
 * Every validator made, compiled or not: `compileAllValidators` compiles the rest (a unit test does, so a schema
 * ajv cannot compile fails there, not at a route's first request).
 */
const made: { compiled(): ValidateFunction }[] = [];

/**
 * A schema compiled on first use, once: a role process imports every route's schemas, and compiling them all as
 * it starts was a third of an api's start-up CPU — seconds on a busy machine, in every restart and rolling upgrade.
 */
function lazyCompile(compiler: Ajv, schema: object): { compiled(): ValidateFunction } {
  let fn: ValidateFunction | undefined;
  const entry = { compiled: () => (fn ??= compiler.compile(schema)) };
  made.push(entry);
  return entry;
}

/** Compiles every validator not yet compiled; returns how many there are. */
export function compileAllValidators(): number {
  for (const v of made) v.compiled();
  return made.length;
}

/** Request bodies: no coercion, unknown fields rejected by the schema. */
export function bodyValidator<T>(schema: object): Validator<T> {
  const lazy = lazyCompile(ajv, schema);
  return {
    schema,
    get check() {
      return lazy.compiled();
    },
    parse(value) {
      if (value === undefined)
        throw new ValidationError(
          [{ field: '', message: 'a JSON body is required' }],
          'A JSON request body is required.',
        );
      const check = lazy.compiled();
      if (!check(value)) throw new ValidationError(toFieldErrors(check.errors));
      return value as T;
    },
  };
}

/** The JSON Schema type of each property a query schema names (its own, and those of an `allOf`). */
function propertyTypes(schema: object): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const visit = (s: { properties?: Record<string, { type?: unknown }>; allOf?: object[] }) => {
    for (const [k, v] of Object.entries(s.properties ?? {})) out.set(k, v.type);
    for (const part of s.allOf ?? []) visit(part);
  };
  visit(schema);
  return out;
}

/**
 * Query strings: each parameter at most once (a repeated one → 400 `repeated_parameter`: which value was
 * meant is not ours to guess), integers written in decimal digits only (`0x10`, `1e2`, ` 5` → 422), then
 * values coerced from strings ("2" → 2), defaults applied, unknown parameters rejected.
 */
export function queryValidator<T>(schema: object): Validator<T> & { parseQuery(q: URLSearchParams): T } {
  const lazy = lazyCompile(queryAjv, schema);
  const types = propertyTypes(schema);
  const parse = (value: unknown): T => {
    const check = lazy.compiled();
    if (!check(value)) throw new ValidationError(toFieldErrors(check.errors));
    return value as T;
  };
  return {
    schema,
    get check() {
      return lazy.compiled();
    },
    parse,
    parseQuery(q) {
      const obj: Record<string, string> = Object.create(null);
      const errors: FieldError[] = [];
      for (const [k, v] of q) {
        if (Object.hasOwn(obj, k))
          throw new BadRequestError(
            `The query parameter ${k} is given more than once; give it once.`,
            'repeated_parameter',
            [{ field: k, message: 'must be given at most once' }],
          );
        obj[k] = v;
        if (types.get(k) === 'integer' && !/^\d+$/.test(v))
          errors.push({ field: k, message: 'must be an integer written in decimal digits' });
      }
      if (errors.length) throw new ValidationError(errors);
      return parse({ ...obj });
    },
  };
}
