import Type from 'typebox';

/**
 * THE rule of free text that reaches a PDF or an email (issue 49): printable characters only. C0 controls (CR, LF,
 * tab, BEL, ESC…), DEL and the C1 controls are refused (422 naming the field): they forge lines in an email header
 * or a PDF, or ring and recolour the terminal that prints a log. The same set as shared/strings.ts
 * hasControlCharacter, which the legal address, tax ids and external ids already used.
 */
export const PRINTABLE_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';
export const PRINTABLE_MESSAGE =
  'must be a string of printable characters (no control characters such as CR, LF, tab, BEL or ESC)';

/** A string of printable characters (PRINTABLE_PATTERN), with the usual length bounds. */
export const PrintableText = (opts: {
  minLength?: number;
  maxLength: number;
  description?: string;
  examples?: string[];
}) => Type.String({ minLength: 1, ...opts, pattern: PRINTABLE_PATTERN, errorMessage: PRINTABLE_MESSAGE });
