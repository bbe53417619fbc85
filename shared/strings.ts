/**
 * `s` without the run of `char` at its end. A loop rather than `/x+$/`: an unanchored regex of that shape
 * backtracks quadratically on a long run of `x` followed by anything else.
 */
export function stripTrailing(s: string, char: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === char) end--;
  return s.slice(0, end);
}

/** How a JSON value reads in a message: "a string", "a JSON number", "null". */
export function jsonValueKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a JSON array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a JSON number';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      return 'a JSON object';
    default:
      return 'nothing';
  }
}
