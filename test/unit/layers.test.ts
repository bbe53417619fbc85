import t from 'tap';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from '../../shared/paths.js';

// The import rules of docs/architecture.md "The layers", read from the sources: the domain knows no role, no
// HTTP feature and no worker; shared/ (the client library and the API's schemas included) knows nothing of
// services/; a control feature never imports the role that mounts it; no two sibling folders, at any depth, import
// each other (services/domain/billing and services/domain/plans as much as services/control and services/roles);
// SQL is written in the domain's store files only.

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(REPO_ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sources(path)));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT =
  /(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The repository paths `file` imports (relative imports only; packages are not layers). */
async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(join(REPO_ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) =>
    relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), m[1] ?? m[2]!)).replaceAll('\\', '/'),
  );
}

/** A repository source file the import names (`./x.js` is `x.ts`), or undefined for anything else. */
function sourceFile(target: string, known: Set<string>): string | undefined {
  const base = target.replace(/\.js$/, '');
  return [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`, target].find((c) => known.has(c));
}

/**
 * The pairs of sibling folders that import each other, at any depth: an import from a/b/x/f.ts to a/b/y/g.ts
 * ties a/b/x to a/b/y (the two folders below the files' deepest common folder). A file directly in a folder and a
 * subfolder of it are one unit (services/roles.ts used by services/roles/), not siblings. Type-only imports count:
 * they tie the folders together for a reader all the same.
 */
function siblingFolderPairs(edges: Iterable<[string, string]>): string[] {
  const directed = new Set<string>();
  for (const [from, to] of edges) {
    const a = from.split('/').slice(0, -1);
    const b = to.split('/').slice(0, -1);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
    if (i === a.length || i === b.length) continue; // same folder, or one file's folder holds the other's
    directed.add(`${a.slice(0, i + 1).join('/')} → ${b.slice(0, i + 1).join('/')}`);
  }
  const pairs: string[] = [];
  for (const edge of directed) {
    const [x, y] = edge.split(' → ') as [string, string];
    if (x < y && directed.has(`${y} → ${x}`)) pairs.push(`${x} ⇄ ${y}`);
  }
  return pairs.sort();
}

async function violations(dir: string, forbidden: (target: string) => boolean): Promise<string[]> {
  const found: string[] = [];
  for (const file of await sources(dir))
    for (const target of await importsOf(file)) if (forbidden(target)) found.push(`${file} → ${target}`);
  return found;
}

t.test('the domain imports only shared/ (not shared/http/) and itself', async (t) => {
  const bad = await violations(
    'services/domain',
    (p) => !(p.startsWith('services/domain/') || (p.startsWith('shared/') && !p.startsWith('shared/http/'))),
  );
  t.same(bad, [], 'no role, control feature, worker, ingress or HTTP import');
});

t.test('shared/ imports nothing of services/', async (t) => {
  t.same(await violations('shared', (p) => p.startsWith('services/')), []);
});

t.test('control features and the ingress import no role', async (t) => {
  t.same(await violations('services/control', (p) => p.startsWith('services/roles/')), []);
  t.same(await violations('services/ingress', (p) => p.startsWith('services/roles/')), []);
});

t.test('workers import no role and no feature', async (t) => {
  t.same(
    await violations('services/workers', (p) => p.startsWith('services/roles/') || p.startsWith('services/control/')),
    [],
  );
});

t.test('the rules see the imports they judge', async (t) => {
  // Guards the reader above: a file known to import the domain is seen doing so.
  const seen = await importsOf('services/control/invoices/pay.ts');
  t.ok(
    seen.some((p) => p.startsWith('services/domain/billing/')),
    'control/invoices/pay.ts → domain/billing/payments',
  );
});

t.test('no two sibling folders import each other, at any depth', async (t) => {
  const files = (await Promise.all(['services', 'shared', 'infra', 'bench'].map(sources))).flat();
  const known = new Set(files);
  const edges: [string, string][] = [];
  for (const file of files)
    for (const target of await importsOf(file)) {
      const hit = sourceFile(target, known);
      if (hit && hit !== file) edges.push([file, hit]);
    }
  t.ok(edges.length > 1000, `read the imports between the sources (${edges.length})`);
  t.same(siblingFolderPairs(edges), [], 'folder pairs: make the imports run one way (docs/architecture.md)');
});

t.test('the sibling-folder rule sees a pair at any depth and only between siblings', async (t) => {
  // Guards the rule above against passing by seeing nothing.
  t.same(
    siblingFolderPairs([
      ['services/domain/billing/run.ts', 'services/domain/plans/pending.ts'],
      ['services/domain/plans/migrate.ts', 'services/domain/billing/upcoming.ts'],
    ]),
    ['services/domain/billing ⇄ services/domain/plans'],
    'two areas of the domain',
  );
  t.same(
    siblingFolderPairs([
      ['services/control/a/x.ts', 'services/roles/api/y.ts'],
      ['services/roles/billing/z.ts', 'services/control/b/w.ts'],
    ]),
    ['services/control ⇄ services/roles'],
    'two top folders of services, whichever subfolders the imports come from',
  );
  t.same(
    siblingFolderPairs([
      ['services/roles.ts', 'services/roles/api/service.ts'],
      ['services/roles/api/service.ts', 'services/roles.ts'],
      ['shared/a/x.ts', 'shared/a/y.ts'],
      ['shared/a/y.ts', 'shared/a/x.ts'],
    ]),
    [],
    'a folder and its own files or parent are one unit; a circle inside one folder is no folder pair',
  );
});

/**
 * A store is where SQL is written: a file of services/domain/ named `store.ts` or `<what>-store.ts`, or a builder
 * of SQL text named `<what>-sql.ts` (usage/read-sql.ts). Everything else — rules, orchestration, HTTP, roles —
 * calls stores.
 */
export const isStore = (file: string) =>
  file.startsWith('services/domain/') && /(^|\/|-)store\.ts$|-sql\.ts$/.test(file);

/** A statement in a string or template literal: what "SQL" means here. */
const SQL = /['"`][^'"`]*\b(SELECT\s[\s\S]*?\sFROM|INSERT\s+INTO|DELETE\s+FROM|UPDATE\s+[a-z_]+(\s+[a-z]+)?\s+SET)\b/;

t.test('SQL is written in store files only', async (t) => {
  // services/ only: shared/ holds the infrastructure's own SQL (migrations, idempotency keys, quotas, ClickHouse DDL).
  const files = (await sources('services')).filter((f) => !f.startsWith('services/console/web/'));
  const withSql: string[] = [];
  for (const file of files) if (SQL.test(await readFile(join(REPO_ROOT, file), 'utf8'))) withSql.push(file);
  t.ok(withSql.filter(isStore).length > 20, `sees the stores' SQL (${withSql.filter(isStore).length} stores)`);
  // Issue 42 moved the last of it (the usage/ files) into stores: no file outside a store may write SQL.
  t.same(
    withSql.filter((f) => !isStore(f)),
    [],
    'move the SQL into the area’s store (store.ts or <what>-store.ts; docs/architecture.md "The feature shape")',
  );
});

t.test('the SQL rule tells a statement from prose and a store from other files', async (t) => {
  t.ok(SQL.test("await client.query('SELECT id FROM invoices WHERE id = $1', [id]);"));
  t.ok(SQL.test('`UPDATE subscriptions s SET plan_id = $2`'));
  t.ok(SQL.test('`INSERT INTO outbox_events (id) VALUES ($1)`'));
  t.notOk(SQL.test('// select the invoices from the run, then update them'));
  t.ok(isStore('services/domain/billing/issue-store.ts'));
  t.ok(isStore('services/domain/products/store.ts'));
  t.ok(isStore('services/domain/usage/read-sql.ts'));
  t.notOk(isStore('services/domain/billing/close.ts'));
  t.notOk(isStore('services/control/products/store.ts'), 'only the domain has stores');
});
