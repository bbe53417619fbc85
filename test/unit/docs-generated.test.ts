import t, { type Test } from 'tap';
import { readFile } from 'node:fs/promises';
import { repoPath } from '../../shared/paths.js';
import { CONFIG_VARIABLES } from '../../shared/config.js';
import { CONFIG_DOC, WEBHOOKS_DOC, apiDoc, type GeneratedDoc } from '../../services/docs/generated-docs.js';
import { generatedRegion } from '../../services/docs/generated-region.js';
import { servedOpenApiDocument } from '../../services/docs/served-openapi.js';
import { EVENT_TYPES } from '../../shared/vocabulary.js';

// The generated docs are what the generator writes now: a route, a schema or a configuration variable that
// changed without `npm run docs` fails here, naming the file to regenerate.

async function checkCurrent(t: Test, doc: GeneratedDoc) {
  const current = await readFile(repoPath(doc.file), 'utf8');
  const wanted = doc.render(current);
  if (current === wanted) return t.pass(`${doc.file} is up to date`);
  const a = current.split('\n');
  const b = wanted.split('\n');
  const line = a.findIndex((l, i) => l !== b[i]);
  t.fail(`${doc.file} differs from what the generator writes (first at line ${line + 1}): run \`npm run docs\``, {
    found: a[line],
    wanted: b[line],
  });
}

t.test('docs/operations.md: the configuration table is shared/config.ts', async (t) => {
  await checkCurrent(t, CONFIG_DOC);
  const table = generatedRegion(await readFile(repoPath(CONFIG_DOC.file), 'utf8'), 'config-table');
  for (const variable of CONFIG_VARIABLES) t.match(table, `| \`${variable}\` |`, `${variable} has its row`);
});

t.test('docs/api.md: the reference is the OpenAPI document the api serves', async (t) => {
  const openApi = await servedOpenApiDocument();
  await checkCurrent(t, apiDoc(openApi));
  const reference = generatedRegion(await readFile(repoPath('docs/api.md'), 'utf8'), 'api-reference');
  for (const [path, item] of Object.entries(openApi.paths as Record<string, object>))
    for (const method of Object.keys(item)) t.match(reference, `### ${method.toUpperCase()} ${path}\n`);
});

t.test('docs/webhooks.md: the payload table is the event catalogue (shared/api/events.ts)', async (t) => {
  await checkCurrent(t, WEBHOOKS_DOC);
  const table = generatedRegion(await readFile(repoPath(WEBHOOKS_DOC.file), 'utf8'), 'event-payloads');
  for (const type of EVENT_TYPES) t.match(table, `| \`${type}\` |`, `${type} has its row`);
});
