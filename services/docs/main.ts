/**
 * `npm run docs`: writes the generated parts of the docs — docs/api.md from the OpenAPI document the api serves,
 * the configuration table of docs/operations.md from shared/config.ts. `--check` writes nothing and exits 1 naming
 * each file that differs from what would be generated (test/unit/docs-generated.test.ts runs the same check).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { repoPath } from '../../shared/paths.js';
import { generatedDocs } from './generated-docs.js';

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const stale: string[] = [];
  for (const doc of await generatedDocs()) {
    const path = repoPath(doc.file);
    const current = await readFile(path, 'utf8');
    const wanted = doc.render(current);
    if (current === wanted) continue;
    stale.push(doc.file);
    if (!check) await writeFile(path, wanted);
  }
  for (const file of stale) process.stdout.write(`${check ? 'out of date' : 'wrote'}: ${file}\n`);
  return check && stale.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
