/**
 * The parsers of configuration values (shared/config.ts): each throws Error(message) on a bad value and says in
 * `allows` what it accepts, which docs/operations.md's configuration table shows.
 */
import { readFileSync } from 'node:fs';
import { stripTrailing } from './strings.js';

/** Throws Error(message) on a bad value; `allows` says what it accepts (docs/operations.md's table shows it). */
export type Parser<T> = ((raw: string) => T) & { allows?: string };

/** How one configuration variable is parsed, defaulted and documented (shared/config.ts). */
export interface VarSpec<T, C = Record<string, unknown>> {
  parse: Parser<T>;
  /** Used when the variable is unset or empty; `undefined` means required. */
  default?: T | ((c: Partial<C>) => T);
  /** The default as the docs show it, when the value itself would not read well (a derived URL, a byte count). */
  shownDefault?: string;
  describe: string;
}

export const allowing = <T>(allows: string, parse: (raw: string) => T): Parser<T> => Object.assign(parse, { allows });

export const int = (min: number, max: number): Parser<number> =>
  allowing(`integer ${min.toLocaleString('en-US')}–${max.toLocaleString('en-US')}`, (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error(`must be an integer from ${min} to ${max}, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`must be an integer from ${min} to ${max}, got ${n}`);
    return n;
  });

export const bool: Parser<boolean> = allowing('true / false (also 1/0, yes/no, on/off)', (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new Error(`must be true or false, got "${raw}"`);
});

export const url = (protocols: string[]): Parser<string> =>
  allowing(`${protocols.join(' or ')} URL`, (raw) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`must be a URL (${protocols.join(' or ')}), got "${raw}"`);
    }
    if (!protocols.includes(u.protocol.replace(/:$/, ''))) {
      throw new Error(`must use ${protocols.map((p) => p + '://').join(' or ')}, got "${u.protocol}//"`);
    }
    return stripTrailing(raw, '/');
  });

/** A comma-separated list of URLs (several servers of one cluster), each checked like `url`. */
export const urlList = (protocols: string[]): Parser<string> =>
  allowing(`${protocols.join(' or ')} URL, or a comma-separated list`, (raw) => {
    const parts = raw.split(',').map((s) => s.trim());
    if (parts.some((p) => p === '')) throw new Error(`must be one URL or a comma-separated list of URLs, got "${raw}"`);
    return parts.map(url(protocols)).join(',');
  });

export const oneOf = <T extends string>(values: readonly T[]): Parser<T> =>
  allowing(values.map((v) => `\`${v}\``).join(', '), (raw) => {
    if (!(values as readonly string[]).includes(raw))
      throw new Error(`must be one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  });

export const host: Parser<string> = allowing('host name or IP address', (raw) => {
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(raw)) throw new Error(`must be a host name or IP address, got "${raw}"`);
  return raw;
});

export const name: Parser<string> = allowing('`[a-z][a-z0-9_]{0,30}`', (raw) => {
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(raw)) throw new Error(`must match [a-z][a-z0-9_]{0,30}, got "${raw}"`);
  return raw;
});

/** A name, or empty for none. */
export const optionalName: Parser<string> = allowing(`empty, or ${name.allows}`, (raw) =>
  raw === '' ? '' : name(raw),
);

export const secretKey: Parser<Buffer> = allowing('32 or more bytes, hex or base64', (raw) => {
  const v = raw.trim();
  const bytes = /^[0-9a-fA-F]+$/.test(v) && v.length % 2 === 0 ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (bytes.length < 32) throw new Error(`must hold at least 32 random bytes (hex or base64), got ${bytes.length}`);
  return bytes;
});

/**
 * Text printed on documents: trimmed, at most `max` characters; `multiline` keeps line breaks (a newline, or the
 * two characters \\n since an environment file holds one line), no other control character.
 */
export const printedText =
  (max: number, multiline: boolean): Parser<string> =>
  (raw) => {
    const text = (multiline ? raw.replace(/\r?\n|\\n/g, '\n') : raw)
      .split('\n')
      .map((l) => l.trim())
      .join('\n')
      .trim();
    if (text.length > max) throw new Error(`must be at most ${max} characters, got ${text.length}`);
    if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text) || (!multiline && text.includes('\n')))
      throw new Error(multiline ? 'must not hold control characters other than line breaks' : 'must be one line');
    return text;
  };

/** A document number prefix: letters, digits, `-_./#` and the `{YYYY}` placeholder, at most 24 characters. */
export const numberPrefix: Parser<string> = allowing(
  'letters, digits, - _ . / # and {YYYY}, at most 24 characters',
  (raw) => {
    const v = raw.trim();
    if (v.length > 24) throw new Error(`must be at most 24 characters, got ${v.length}`);
    if (!/^([A-Za-z0-9_./#-]|\{YYYY\})*$/.test(v))
      throw new Error(`may hold only letters, digits, - _ . / # and {YYYY}, got "${raw}"`);
    return v;
  },
);

/** An email address, alone or as `Name <address>`; one line. */
export const mailAddress: Parser<string> = allowing('`a@b.example` or `Name <a@b.example>`', (raw) => {
  const v = raw.trim();
  if (!/^(?:[^<>\r\n@]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/.test(v))
    throw new Error(`must be an email address or "Name <address>", got "${raw}"`);
  return v;
});

/** A Stripe key: one of the prefixes, then key characters. The error never echoes the value (it is a secret). */
export const stripeKey = (...prefixes: string[]): Parser<string> =>
  allowing(prefixes.map((p) => `\`${p}…\``).join(' or '), (raw) => {
    const v = raw.trim();
    if (!prefixes.some((p) => v.startsWith(p)) || !/^[A-Za-z0-9_]+$/.test(v))
      throw new Error(`must start with ${prefixes.join(' or ')} and hold only letters, digits and _ (value not shown)`);
    return v;
  });

/** A path to a file holding a secret (a mounted secret); the file's contents, trimmed and checked by `inner`. */
export const secretFile = (inner: Parser<string>): Parser<string> =>
  allowing(`path to a file holding ${inner.allows ?? 'the value'}`, (raw) => {
    let text: string;
    try {
      text = readFileSync(raw, 'utf8');
    } catch (e) {
      throw new Error(`cannot read "${raw}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    return inner(text.trim());
  });
