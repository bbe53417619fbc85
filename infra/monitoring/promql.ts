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

const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const NAME_START = /[a-zA-Z_:]/;
const NAME_PART = /[a-zA-Z0-9_:]/;
const DURATION_PART = /[0-9.a-zA-Z]/;

/** Where the bracket opened at `i` closes (or the end): strings inside are skipped whole. */
function closing(expr: string, i: number, close: string): number {
  let j = i + 1;
  while (j < expr.length && expr[j] !== close) j = expr[j] === '"' || expr[j] === "'" ? skipString(expr, j) : j + 1;
  return j + 1;
}

/** The index after the string literal opened at `i` (escapes honoured). */
function skipString(expr: string, i: number): number {
  const quote = expr[i];
  let j = i + 1;
  while (j < expr.length && expr[j] !== quote) j += expr[j] === '\\' ? 2 : 1;
  return j + 1;
}

/** The next non-blank index after `i`, past a `by (…)`-style list there (`sum by (le) (…)` is a call of sum). */
function afterLabelList(expr: string, i: number): number {
  let j = i;
  while (j < expr.length && /\s/.test(expr[j]!)) j++;
  let k = j;
  while (k < expr.length && NAME_PART.test(expr[k]!)) k++;
  if (k === j || !LABEL_LISTS.has(expr.slice(j, k).toLowerCase())) return j;
  let open = k;
  while (open < expr.length && /\s/.test(expr[open]!)) open++;
  if (expr[open] !== '(') return j;
  j = closing(expr, open, ')');
  while (j < expr.length && /\s/.test(expr[j]!)) j++;
  return j;
}

/**
 * One pass over the expression, each character looked at a bounded number of times (a scanner, not regexes that
 * rescan from every position: the regex lint, test/unit/safe-regex.test.ts, holds this file to linear time too).
 */
export function metricNames(expr: string): string[] {
  const out = new Set<string>();
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') i = skipString(expr, i);
    else if (c === '{') i = closing(expr, i, '}');
    else if (c === '[') i = closing(expr, i, ']');
    else if (c === '$') {
      i++;
      while (i < expr.length && NAME_PART.test(expr[i]!)) i++;
    } else if (/[0-9]/.test(c)) {
      while (i < expr.length && DURATION_PART.test(expr[i]!)) i++;
    } else if (NAME_START.test(c)) {
      const start = i;
      while (i < expr.length && NAME_PART.test(expr[i]!)) i++;
      const name = expr.slice(start, i);
      const next = afterLabelList(expr, i);
      const call = expr[next] === '(';
      if (call && LABEL_LISTS.has(name.toLowerCase())) i = closing(expr, next, ')');
      else if (!call && !KEYWORDS.has(name.toLowerCase())) out.add(name);
    } else i++;
  }
  return [...out];
}
