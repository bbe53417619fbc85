/**
 * The metric names a PromQL expression reads, for the checks that every alert rule and dashboard query
 * names a metric the roles really export (test/e2e/monitoring.test.ts). Not a full parser: it removes what
 * is not a metric name — strings, label matchers, range and subquery brackets, `by (…)`-style label lists,
 * function calls, keywords, numbers, durations and Grafana's `$__…` variables — and returns what is left.
 */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'inf',
  'nan',
]);

export function metricNames(expr: string): string[] {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges, subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/\$__\w+|\$\w+/g, ' ') // dashboard variables
    .replace(/\b[a-zA-Z_][a-zA-Z0-9_]*\s*\(/g, '(') // function calls
    .replace(/\b\d+(\.\d+)?([smhdwy]|ms)?\b/g, ' '); // numbers and durations
  const out = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) if (!KEYWORDS.has(m[0].toLowerCase())) out.add(m[0]);
  return [...out];
}
