/**
 * `s` without the run of `char` at its end. A loop rather than `/x+$/`: an unanchored regex of that shape
 * backtracks quadratically on a long run of `x` followed by anything else.
 */
export function stripTrailing(s: string, char: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === char) end--;
  return s.slice(0, end);
}

/** `local@domain.tld`: one `@`, no whitespace, a dot inside the domain. Linear scans, no backtracking regex. */
export function looksLikeEmail(s: string): boolean {
  const at = s.indexOf('@');
  if (at < 1 || at !== s.lastIndexOf('@') || /\s/.test(s)) return false;
  const dot = s.indexOf('.', at + 2);
  return dot !== -1 && dot < s.length - 1;
}

/** Whether `s` holds a control character (C0, DEL or C1): what "printable" text may not contain. */
export function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
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
