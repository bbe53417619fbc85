import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { repoPath } from '../../shared/paths.js';

// docs/architecture.md's domain table ("The domain, by area") is the map of services/domain/: every area folder has
// a row (a folder may share a row with others: `products/`, `meters/`, …), and no row names a folder that is gone.

/** The area folders named in the first column of the domain table. */
export function areasInTable(doc: string): string[] {
  const start = doc.indexOf('| area | holds |');
  if (start < 0) return [];
  const rows = doc.slice(start).split('\n');
  const areas: string[] = [];
  for (const row of rows.slice(2)) {
    if (!row.startsWith('|')) break;
    const first = row.split('|')[1] ?? '';
    for (const [, name] of first.matchAll(/`([a-z0-9-]+)\/`/g)) areas.push(name!);
  }
  return areas;
}

t.test('the domain table names every folder of services/domain/ and no other', async (t) => {
  const folders = readdirSync(repoPath('services/domain'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const named = areasInTable(readFileSync(repoPath('docs/architecture.md'), 'utf8'));
  t.ok(folders.length > 10, `services/domain/ has its areas (${folders.length})`);
  t.same(
    folders.filter((f) => !named.includes(f)),
    [],
    'every area folder has a row',
  );
  t.same(
    named.filter((a) => !folders.includes(a)),
    [],
    'every row names an existing folder',
  );
});

t.test('the reader sees rows, shared rows and the end of the table', async (t) => {
  const doc = [
    'intro',
    '| area | holds |',
    '|---|---|',
    '| `pricing/` | maths |',
    '| `products/`, `meters/` | stores; not `usage/` here |',
    '',
    '| `later/` | another table |',
  ].join('\n');
  t.same(areasInTable(doc), ['pricing', 'products', 'meters']);
  t.same(areasInTable('no table'), []);
});
