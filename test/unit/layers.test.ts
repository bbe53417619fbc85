import t from 'tap';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from '../../shared/paths.js';

// The import rules of docs/architecture.md "The layers", read from the sources: the domain knows no role, no
// HTTP feature and no worker; shared/ (the client library and the API's schemas included) knows nothing of
// services/; a control feature never imports the role that mounts it. (Sibling folders importing each other
// and import circles are checked by ../shared/tools/import-circles.mjs, outside the repository.)

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
