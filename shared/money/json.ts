import { randomBytes } from 'node:crypto';
import { canonicalDecimal, type DecimalValue } from './decimal.js';

/**
 * Exact decimals in JSON. `JSON.stringify(0.1 + 0.2)` prints 0.30000000000000004 and a JS number can't hold
 * 29 integer digits plus 9 decimals; money is kept as decimal strings and written as JSON *numbers* from
 * those strings, digit for digit. Put a `JsonDecimal` where a number belongs and serialize with `stringifyJson` (every route reply does:
 * shared/http/reply.ts).
 */
export class JsonDecimal {
  readonly text: string;
  constructor(value: DecimalValue) {
    this.text = canonicalDecimal(value);
  }
}

// Unguessable per process, so no caller-supplied string can be mistaken for a decimal placeholder.
const MARK = `~dec${randomBytes(8).toString('hex')}~`;
const PLACEHOLDER = new RegExp(`"${MARK}(-?[0-9]+(?:\\.[0-9]+)?)${MARK}"`, 'g');

export function stringifyJson(value: unknown): string {
  let sawDecimal = false;
  const text = JSON.stringify(value, (_key, v) => {
    if (v instanceof JsonDecimal) {
      sawDecimal = true;
      return MARK + v.text + MARK;
    }
    return v;
  });
  return sawDecimal ? text.replace(PLACEHOLDER, '$1') : text;
}

/** A number literal exactly as the client wrote it (`0.10`, `1e-9`, `12345678901234567890.5`). */
export class JsonNumberLiteral {
  constructor(readonly text: string) {}
}

/**
 * JSON.parse, except numbers come back as `JsonNumberLiteral`s holding their source text (Node 20 has no
 * JSON.parse source access). Used on bodies JSON.parse already accepted, to read money without a detour
 * through binary floating point. Duplicate keys: the last wins, as with JSON.parse.
 */
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

export function parseJsonExact(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (): never => {
    throw new SyntaxError(`invalid JSON at position ${i}`);
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail();
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const k = str();
        ws();
        if (text[i++] !== ':') fail();
        Object.defineProperty(out, k, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        const sep = text[i++];
        if (sep === '}') return out;
        if (sep !== ',') fail();
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        const sep = text[i++];
        if (sep === ']') return out;
        if (sep !== ',') fail();
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) return ((i += 4), true);
    if (text.startsWith('false', i)) return ((i += 5), false);
    if (text.startsWith('null', i)) return ((i += 4), null);
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail();
    i += m![0].length;
    return new JsonNumberLiteral(m![0]);
  };
  const out = value();
  ws();
  if (i !== text.length) fail();
  return out;
}

/** The exact source text of a top-level number field of a JSON body, or undefined when absent or not a number. */
export function numberLiteralAt(rawBody: Buffer | undefined, field: string): string | undefined {
  return numberLiteralsOf(rawBody)([field]);
}

/**
 * Parses a body once and returns a reader of the exact source text of the number at a path
 * (`['tiers', 0, 'unit_price']`), undefined when absent or not a number.
 */
export function numberLiteralsOf(
  rawBody: Buffer | undefined,
): (path: readonly (string | number)[]) => string | undefined {
  const doc = rawBody && rawBody.length ? parseJsonExact(rawBody.toString('utf8')) : undefined;
  return (path) => {
    let v: unknown = doc;
    for (const key of path) {
      if (!v || typeof v !== 'object' || Array.isArray(v) !== (typeof key === 'number')) return undefined;
      v = (v as Record<string | number, unknown>)[key];
    }
    return v instanceof JsonNumberLiteral ? v.text : undefined;
  };
}
