import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT } from '../../shared/paths.js';

// Docs that stay true (issue 25). The rules, for every Markdown file under docs/ and README.md:
// - a repository path in `code` or a [link](target) names a file or folder that exists. Code spans are read
//   from the repository root (`services/domain/billing/run.ts`), links from the document's folder
//   (`[api.md](api.md)`); a span with a placeholder (`<feature>`, `*`, `…`, `{id}`) is a pattern, not a path,
//   and build output (`dist/`, `.data/`, `node_modules/`) is not checked;
// - a migration named by file (`446_subscription_item_history.sql`) or number (`migration 446`) exists;
// - a link to a section (`[x](billing.md#credit-notes)`, `[x](#trials)`) names a heading of that document (GitHub's
//   anchors), and a section named in prose (README's "Quickstart" section, README "Layout") is a heading of it;
// - docs/architecture.md's request pipeline names the steps of services/roles/api/pipeline.ts, in order.
// Fenced code blocks (examples, shell sessions) are not read. Source comments are held to the same path and
// migration rules.

const TOP = new Set(
  readdirSync(REPO_ROOT, { withFileTypes: true })
    .filter((e) => !['dist', 'node_modules', '.data', '.git', '.tap'].includes(e.name))
    .map((e) => e.name),
);
const MIGRATIONS = ['infra/migrations/postgres', 'infra/migrations/clickhouse'].flatMap((dir) =>
  readdirSync(join(REPO_ROOT, dir)),
);
const PLACEHOLDER = /[<>…*{}$|]/;

interface Named {
  line: number;
  path: string;
  /** Where the path is read from: the repository root, or the folder of the document. */
  from: string;
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): [number, string][] {
  let fenced = false;
  const out: [number, string][] = [];
  text.split('\n').forEach((line, i) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) out.push([i + 1, line]);
  });
  return out;
}

/** A token of a code span that reads as a repository path, cleaned of what surrounds it (`file.ts:42`, `dir/,`). */
function repoPathIn(token: string): string | undefined {
  const path = token
    .replace(/^[("'[]+/, '')
    .replace(/[)"'\],.;]+$/, '')
    .replace(/:\d+(-\d+)?$/, '');
  if (!path.includes('/') && !TOP.has(path)) return undefined;
  if (PLACEHOLDER.test(path) || path.includes('://')) return undefined;
  return TOP.has(path.split('/')[0]!) ? path.replace(/\/$/, '') : undefined;
}

export function pathsNamedIn(doc: string, text: string): Named[] {
  const named: Named[] = [];
  for (const [line, content] of proseLines(text)) {
    for (const [, target] of content.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^([a-z]+:|#)/.test(target!)) continue;
      const path = decodeURIComponent(target!.replace(/#.*$/, ''));
      if (path && !PLACEHOLDER.test(path)) named.push({ line, path, from: dirname(doc) });
    }
    for (const [, span] of content.matchAll(/`([^`]+)`/g)) {
      for (const token of span!.split(/[\s,]+/)) {
        const path = repoPathIn(token);
        if (path) named.push({ line, path, from: '.' });
      }
    }
  }
  return named;
}

/** Migrations named by file or by number (`migration 446`, `migrations 340 and 350`). */
export function migrationsNamedIn(text: string): { line: number; migration: string }[] {
  const out: { line: number; migration: string }[] = [];
  text.split('\n').forEach((content, i) => {
    for (const [file] of content.matchAll(/\b\d{3}_[a-z0-9_]+\.sql\b/g)) out.push({ line: i + 1, migration: file! });
    for (const [, list] of content.matchAll(/\bmigrations? ((?:\d{3}(?:,? (?:and )?)?)+)/gi))
      for (const [number] of list!.matchAll(/\d{3}/g)) out.push({ line: i + 1, migration: number! });
  });
  return out;
}

/** A path exists as named, or as the TypeScript source of a compiled `.js` path (`services/main.js`). */
const pathExists = (path: string) =>
  existsSync(join(REPO_ROOT, path)) ||
  (path.endsWith('.js') && existsSync(join(REPO_ROOT, path.replace(/\.js$/, '.ts'))));

const migrationExists = (m: string) =>
  m.endsWith('.sql') ? MIGRATIONS.includes(m) : MIGRATIONS.some((f) => f.startsWith(`${m}_`));

function files(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...files(path, keep));
    else if (keep(entry.name)) out.push(path);
  }
  return out;
}

const DOCS = ['README.md', ...files('docs', (n) => n.endsWith('.md'))];

/** GitHub's anchor of a heading: lower case, code and link marks dropped, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** A document's headings (outside code blocks) and their anchors; a repeated anchor gets -1, -2… as on GitHub. */
export function headingsOf(text: string): { titles: Set<string>; anchors: Set<string> } {
  const titles = new Set<string>();
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, line] of proseLines(text)) {
    const title = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (title === undefined) continue;
    titles.add(title.replace(/`/g, ''));
    const base = anchorOf(title);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return { titles, anchors };
}

/** Sections a doc points at: links' anchors (`file.md#anchor`, `#anchor`) and README sections named in prose. */
export function sectionsNamedIn(
  doc: string,
  text: string,
): { line: number; file: string; anchor?: string; title?: string }[] {
  const out: { line: number; file: string; anchor?: string; title?: string }[] = [];
  for (const [line, content] of proseLines(text)) {
    for (const [, target] of content.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const m = /^([^#:]*\.md)?#(.+)$/.exec(target!);
      if (!m) continue;
      const file = m[1] ? relative(REPO_ROOT, join(REPO_ROOT, dirname(doc), decodeURIComponent(m[1]))) : doc;
      out.push({ line, file, anchor: decodeURIComponent(m[2]!) });
    }
    for (const [, title] of content.matchAll(/\bREADME(?:['’]s)? ["“]([^"”]+)["”]/g))
      out.push({ line, file: 'README.md', title: title! });
  }
  return out;
}

t.test('every repository path a doc names exists', async (t) => {
  const missing: string[] = [];
  let checked = 0;
  for (const doc of DOCS) {
    for (const { line, path, from } of pathsNamedIn(doc, readFileSync(join(REPO_ROOT, doc), 'utf8'))) {
      checked++;
      const resolved = relative(REPO_ROOT, join(REPO_ROOT, from, path));
      if (!pathExists(resolved)) missing.push(`${doc}:${line}: ${path} (no ${resolved})`);
    }
  }
  t.ok(checked > 200, `read the paths the docs name (${checked})`);
  t.same(missing, [], 'doc:line: path — fix the path, or write it as a pattern (<name>, *) if it is one');
});

t.test('every section a doc links to or names exists', async (t) => {
  const headings = new Map(DOCS.map((d) => [d, headingsOf(readFileSync(join(REPO_ROOT, d), 'utf8'))]));
  const missing: string[] = [];
  let checked = 0;
  for (const doc of DOCS) {
    for (const { line, file, anchor, title } of sectionsNamedIn(doc, readFileSync(join(REPO_ROOT, doc), 'utf8'))) {
      const of = headings.get(file);
      if (!of) continue; // not a document of the set (a path rule reports a missing file)
      checked++;
      if (anchor !== undefined && !of.anchors.has(anchor)) missing.push(`${doc}:${line}: ${file}#${anchor}`);
      if (title !== undefined && !of.titles.has(title)) missing.push(`${doc}:${line}: ${file} "${title}"`);
    }
  }
  t.ok(checked > 50, `read the sections the docs point at (${checked})`);
  t.same(missing, [], 'doc:line: file#anchor — no such heading there');
});

t.test('every migration the docs and the sources cite exists', async (t) => {
  const sources = [
    ...DOCS,
    // Not test/: tests write migrations of their own (fixtures of a later release) that are meant not to exist.
    ...['services', 'shared', 'infra', 'bench'].flatMap((d) => files(d, (n) => /\.(ts|sql)$/.test(n))),
  ];
  const missing: string[] = [];
  for (const file of sources)
    for (const { line, migration } of migrationsNamedIn(readFileSync(join(REPO_ROOT, file), 'utf8')))
      if (!migrationExists(migration)) missing.push(`${file}:${line}: migration ${migration}`);
  t.same(missing, [], 'file:line: migration — no such file in infra/migrations/');
});

t.test('every repository path a source comment names exists', async (t) => {
  const missing: string[] = [];
  for (const file of ['services', 'shared', 'infra', 'bench'].flatMap((d) => files(d, (n) => /\.(ts|sql)$/.test(n)))) {
    readFileSync(join(REPO_ROOT, file), 'utf8')
      .split('\n')
      .forEach((content, i) => {
        const comment = /(?:\/\/|\/\*|^\s*\*|--)(.*)$/.exec(content)?.[1];
        if (!comment) return;
        for (const token of comment.split(/[\s,]+/)) {
          const path = repoPathIn(token);
          if (path && /\.(ts|sql|md|mjs|js|json)$|\/$/.test(path) && !pathExists(path))
            missing.push(`${file}:${i + 1}: ${path}`);
        }
      });
  }
  t.same(missing, [], 'file:line: path');
});

t.test("docs/architecture.md's request pipeline is the api's, step for step", async (t) => {
  const source = readFileSync(join(REPO_ROOT, 'services/roles/api/pipeline.ts'), 'utf8');
  const body = /return \[([\s\S]*?)\n {2}\];/.exec(source.slice(source.indexOf('export function apiPipeline')))?.[1];
  const steps = [...(body ?? '').matchAll(/^ {4}(\w+)\(/gm)].map((m) => m[1]);
  t.ok(steps.length >= 5, `read the pipeline's steps (${steps.join(', ')})`);
  const doc = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### The request pipeline'));
  const listed = [...section.slice(0, section.indexOf('\n### ', 5)).matchAll(/^\d+\. \*\*[^*]+\*\* \(`(\w+)`\)/gm)].map(
    (m) => m[1],
  );
  t.same(listed, steps, 'the numbered list names pipeline.ts’s steps, in order, as "N. **name** (`function`)"');
});

t.test('the rules read what they judge', async (t) => {
  const nope = ['436', 'nope.sql'].join('_'); // not spelled out: this file is read by the migration rule too
  const sample = [
    'See `services/domain/billing/run.ts:12`, [api](api.md#meters) and `services/control/<feature>/`.',
    '```sh',
    'node dist/services/nope.js',
    '```',
    `Also \`docs/nope.md\`, migration 446 and \`${nope}\`.`,
  ].join('\n');
  t.same(
    pathsNamedIn('docs/x.md', sample).map((n) => `${n.line} ${n.from} ${n.path}`),
    ['1 docs api.md', '1 . services/domain/billing/run.ts', '5 . docs/nope.md'],
  );
  t.same(
    migrationsNamedIn(sample).map((m) => m.migration),
    [nope, '446'],
  );
  t.notOk(migrationExists(nope));
  t.ok(migrationExists('446'));
  const doc = [
    '# Usage',
    '### Client library (`meterline/client`)',
    '## Usage',
    '```sh',
    '# 202 = stored',
    '```',
    'See [it](#client-library-meterlineclient), [there](billing.md#tax-legal-details-and-terms), the README\'s "Configuration" section.',
  ].join('\n');
  t.same(
    [...headingsOf(doc).anchors],
    ['usage', 'client-library-meterlineclient', 'usage-1'],
    'a fenced # is no heading',
  );
  t.same(
    sectionsNamedIn('docs/x.md', doc).map((s) => `${s.file} ${s.anchor ?? `"${s.title}"`}`),
    [
      'docs/x.md client-library-meterlineclient',
      'docs/billing.md tax-legal-details-and-terms',
      'README.md "Configuration"',
    ],
  );
  t.equal(anchorOf('Tax, legal details and terms'), 'tax-legal-details-and-terms');
});
