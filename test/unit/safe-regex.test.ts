import t from 'tap';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { checkSync } from 'recheck';
import { repoPath, REPO_ROOT } from '../../shared/paths.js';

// Lint: every regular expression the code can run — regex literals, `new RegExp(…)`/`RegExp(…)`, and the
// `pattern` strings of JSON schemas (ajv compiles them into regexes that run on request input) — is checked
// by recheck (automata-theory analysis, fuzzing where that can't decide) for super-linear backtracking
// (exponential or polynomial). Any vulnerable one fails the test. A template literal passed to RegExp is
// checked with each `${…}` replaced by a plain character: what it interpolates must be literal text.

const SCANNED = ['services', 'shared', 'infra', 'bench'];

interface FoundRegex {
  where: string;
  source: string;
  flags: string;
}

const stringValue = (node: ts.Node | undefined): string | undefined => {
  if (!node) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((s) => 'a' + s.literal.text).join('');
  return undefined;
};

/** Every regex in one TypeScript source; `dynamic` lists RegExp constructions whose pattern isn't text. */
export function regexesIn(fileName: string, text: string): { found: FoundRegex[]; dynamic: string[] } {
  const file = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.ES2022,
    true,
    fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: FoundRegex[] = [];
  const dynamic: string[] = [];
  const where = (n: ts.Node) => `${fileName}:${file.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText();
      const end = literal.lastIndexOf('/');
      found.push({ where: where(node), source: literal.slice(1, end), flags: literal.slice(end + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const source = stringValue(node.arguments?.[0]);
      if (source === undefined) dynamic.push(where(node));
      else found.push({ where: where(node), source, flags: stringValue(node.arguments?.[1]) ?? '' });
    } else if (ts.isPropertyAssignment(node) && node.name.getText().replace(/['"]/g, '') === 'pattern') {
      const source = stringValue(node.initializer);
      if (source !== undefined) found.push({ where: where(node), source, flags: 'u' });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return { found, dynamic };
}

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'dist')
      out.push(...(await sourceFiles(p)));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// A fixed seed makes the fuzzing part of the check repeatable (a random one flagged a regex in one run and not in
// the next). A check that times out on a loaded machine is retried with a longer budget before it counts as
// undecided, so the verdict depends on the regex, not on the machine's load.
const check = (r: FoundRegex, timeout: number) => checkSync(r.source, r.flags, { timeout, randomSeed: 20_261_123 });
const verdict = (r: Pick<FoundRegex, 'source' | 'flags'>) => {
  let d = check(r as FoundRegex, 10_000);
  if (d.status === 'unknown' && d.error.kind === 'timeout') d = check(r as FoundRegex, 120_000);
  return d.status === 'vulnerable'
    ? `${d.complexity.type}, attack ${JSON.stringify(d.attack.pattern)}`
    : d.status === 'unknown'
      ? `undecided: ${d.error.kind}`
      : null;
};

// The verdict is a function of (pattern, flags, recheck's version) — the fuzzing seed is fixed — so a pattern judged
// safe once is not analysed again: `npm run test:unit` keeps the safe verdicts in dist/ (build output, never
// committed) and analyses only the patterns it has not seen. A fresh checkout (CI) analyses every one.
const RECHECK_VERSION = (createRequire(import.meta.url)('recheck/package.json') as { version: string }).version;
const CACHE = repoPath(`dist/.cache/safe-regex-${RECHECK_VERSION}.json`);

async function safeVerdicts(): Promise<Set<string>> {
  try {
    return new Set(JSON.parse(await readFile(CACHE, 'utf8')) as string[]);
  } catch {
    return new Set();
  }
}

t.test('the lint recognises the regex shapes that froze the api', async (t) => {
  const sample = [
    'const NUMBER_INPUT = /^[0-9]+(?:[ -]?[0-9]+)*$/;',
    'const trailing = new RegExp("\\\\s*$");',
    "const s = Type.String({ pattern: '^(a|a)*$' });",
    'const fine = /^[0-9]{3,4}$/;',
  ].join('\n');
  const { found } = regexesIn('sample.ts', sample);
  t.same(
    found.map((r) => r.source),
    ['^[0-9]+(?:[ -]?[0-9]+)*$', '\\s*$', '^(a|a)*$', '^[0-9]{3,4}$'],
  );
  t.same(
    found.map((r) => verdict(r)?.split(',')[0] ?? 'safe'),
    ['exponential', 'polynomial', 'exponential', 'safe'],
  );
});

// Scanning every source file's regexes takes ~10 s alone and several times that on a loaded machine: tap's
// default 30 s is no measure of this test.
t.setTimeout(300_000);
t.test(`no regex in ${SCANNED.join('/, ')}/ backtracks super-linearly`, { timeout: 240_000 }, async (t) => {
  const problems: string[] = [];
  const dynamicRegexes: string[] = [];
  const byPattern = new Map<string, FoundRegex[]>();
  for (const dir of SCANNED) {
    for (const path of await sourceFiles(repoPath(dir))) {
      const { found, dynamic } = regexesIn(relative(REPO_ROOT, path), await readFile(path, 'utf8'));
      dynamicRegexes.push(...dynamic);
      for (const r of found) {
        const key = `/${r.source}/${r.flags}`;
        byPattern.set(key, [...(byPattern.get(key) ?? []), r]);
      }
    }
  }
  const safe = await safeVerdicts();
  let analysed = 0;
  for (const [key, uses] of byPattern) {
    if (safe.has(key)) continue;
    analysed++;
    const bad = verdict(uses[0]!);
    if (bad) for (const r of uses) problems.push(`${r.where} ${key}: ${bad}`);
    else safe.add(key);
  }
  await mkdir(dirname(CACHE), { recursive: true });
  await writeFile(CACHE, JSON.stringify([...safe].sort()));
  const count = [...byPattern.values()].reduce((n, uses) => n + uses.length, 0);
  t.ok(count > 50, `found the repository's regexes (${count}; ${byPattern.size} patterns, ${analysed} analysed now)`);
  t.same(problems, [], 'every regex runs in linear time');
  t.same(dynamicRegexes, [], 'every RegExp is built from literal text the lint can check');
});
