/**
 * `s` without the run of `char` at its end. A loop rather than `/x+$/`: an unanchored regex of that shape
 * backtracks quadratically on a long run of `x` followed by anything else.
 */
export function stripTrailing(s: string, char: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === char) end--;
  return s.slice(0, end);
}
