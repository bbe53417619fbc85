/**
 * Dimensions of usage records (docs/design.md §8, issue 18): string key → string value, e.g.
 * `{model: "gpt-x", region: "eu"}`. Stored in ClickHouse as two parallel Array(String) columns, keys sorted
 * (18.16 has no Map type), so one dimension set has exactly one representation — the rollups group by it.
 *
 * Declared dimensions: a meter whose `dimensions` list is empty accepts any keys (an open meter); a meter
 * that declares keys accepts only those (others → 422 on that record). Every key is optional on a record; a
 * record without a key is in that key's "absent" group (`null` in group-by answers). Declared dimensions can
 * be added to a meter, never removed (records already stored carry them).
 */
import type { FieldError } from '../errors.js';
import { jsonValueKind } from '../strings.js';

export const DIMENSION_LIMITS = {
  /** Keys on one record. */
  maxKeys: 16,
  /** Key syntax. */
  keyPattern: /^[a-z0-9_]{1,64}$/,
  keyDescription: 'lowercase letters, digits and underscores (1 to 64 characters)',
  /** Characters of one value; empty values are refused ('' is how ClickHouse says "absent"). */
  maxValueLength: 256,
} as const;

/** A record's dimensions, keys sorted; `values[i]` belongs to `keys[i]`. */
export interface Dimensions {
  keys: string[];
  values: string[];
}

export const NO_DIMENSIONS: Dimensions = { keys: [], values: [] };

export const KEY_MESSAGE = `must be ${DIMENSION_LIMITS.keyDescription}`;

/** Why a dimension key is unusable (for a meter declaring `declared`), or undefined. */
export function dimensionKeyProblem(key: string, declared: readonly string[] | undefined): string | undefined {
  if (!DIMENSION_LIMITS.keyPattern.test(key)) return KEY_MESSAGE;
  if (declared && declared.length > 0 && !declared.includes(key))
    return `is not a declared dimension of this meter (declared: ${declared.join(', ')})`;
  return undefined;
}

/**
 * THE dimension rules of a record (every ingest path calls this through checkRecord): an object of at most
 * 16 string values of 1–256 characters under valid, declared keys. Pushes problems as `dimensions.<key>`
 * (prefixed with `field`) and returns undefined, or returns the sorted dimensions.
 */
export function checkDimensions(
  raw: unknown,
  declared: readonly string[] | undefined,
  errors: FieldError[],
  field = 'dimensions',
): Dimensions | undefined {
  if (raw === undefined) return NO_DIMENSIONS;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    errors.push({ field, message: 'must be an object of string values' });
    return undefined;
  }
  const before = errors.length;
  const keys = Object.keys(raw).sort();
  if (keys.length > DIMENSION_LIMITS.maxKeys)
    errors.push({ field, message: `must have at most ${DIMENSION_LIMITS.maxKeys} keys` });
  const values: string[] = [];
  for (const key of keys) {
    const value = (raw as Record<string, unknown>)[key];
    const keyProblem = dimensionKeyProblem(key, declared);
    if (keyProblem) errors.push({ field: `${field}.${key}`, message: keyProblem });
    else if (typeof value !== 'string')
      errors.push({ field: `${field}.${key}`, message: `must be a string, not ${jsonValueKind(value)}` });
    else if (value.length === 0 || value.length > DIMENSION_LIMITS.maxValueLength) {
      errors.push({ field: `${field}.${key}`, message: `must be 1 to ${DIMENSION_LIMITS.maxValueLength} characters` });
    } else values.push(value);
  }
  return errors.length > before ? undefined : { keys, values };
}

const ARRAY_ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** An Array(String) in ClickHouse's TabSeparated text form: `['a','b\'c']` (no raw tab or newline). */
export function tsvArray(items: readonly string[]): string {
  if (items.length === 0) return '[]';
  let out = '[';
  for (let i = 0; i < items.length; i++)
    out += `${i ? ',' : ''}'${items[i]!.replace(/[\\'\t\n\r]/g, (c) => ARRAY_ESCAPES[c]!)}'`;
  return out + ']';
}

/** ClickHouse expression: the value of dimension `key` of a row ('' when the row has none). `key` is checked syntax. */
export function dimensionSql(key: string): string {
  if (!DIMENSION_LIMITS.keyPattern.test(key)) throw new Error(`bad dimension key ${key}`);
  return `dim_values[indexOf(dim_keys, '${key}')]`;
}

/** The record's dimensions as the API shows them. */
export function dimensionsObject(d: Dimensions): Record<string, string> {
  const out: Record<string, string> = {};
  d.keys.forEach((k, i) => (out[k] = d.values[i]!));
  return out;
}
