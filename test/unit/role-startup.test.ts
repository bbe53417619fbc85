import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { repoPath } from '../../shared/paths.js';
import { ValidationError } from '../../shared/errors.js';
import { bodyValidator, compileAllValidators } from '../../shared/http/validation.js';

// A role process compiles request schemas on first use, not as it starts (shared/http/validation.ts): so that a
// schema ajv cannot compile still fails here and not at some route's first request, every schema the api's routes
// define is compiled now.
t.test("every schema of the api's routes compiles", async (t) => {
  await import('../../services/roles/api/service.js');
  await import('../../services/roles/api/authenticator.js');
  const count = compileAllValidators();
  t.ok(count > 50, `${count} schemas compiled`);
});

t.test('a validator compiles once, on first use, and then answers like a compiled one', async (t) => {
  const v = bodyValidator<{ n: number }>({
    type: 'object',
    properties: { n: { type: 'integer' } },
    required: ['n'],
    additionalProperties: false,
  });
  t.equal(v.check, v.check, 'the same compiled function each time');
  t.same(v.parse({ n: 2 }), { n: 2 });
  const err = (() => {
    try {
      v.parse({ n: 'x' });
    } catch (e) {
      return e;
    }
  })();
  t.ok(err instanceof ValidationError, 'a wrong type is a validation error');
  t.same((err as ValidationError).errors, [{ field: 'n', message: 'must be an integer, not a string' }]);
  t.notOk(v.check({}), 'the compiled function refuses a body without n');
});

// Each role loads its own code: a consumer loads neither the api's routes nor the S3 client (services/roles.ts).
t.test('a role imports only its own modules', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'role-modules-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const list = join(dir, 'loaded.txt');
  // A module hook noting every URL loaded (hooks run on their own thread: a file is how they tell).
  const hook = `import { appendFileSync } from 'node:fs';
    export async function load(url, ctx, next) { appendFileSync(${JSON.stringify(list)}, url + '\\n'); return next(url, ctx); }`;
  const script = `
    import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
    const { createRole } = await import(${JSON.stringify(pathToFileURL(repoPath('dist/services/roles.js')).href)});
    // A stub infra: the consumer's modules load, then building it fails — only the imports are looked at.
    await createRole('consumer', {}).catch(() => undefined);
  `;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const loaded = readFileSync(list, 'utf8');
  t.match(loaded, /roles\/consumer\/usage-consumer\.js/, "the consumer's own code is loaded");
  t.notMatch(loaded, /roles\/api\//, "no module of the api's");
  t.notMatch(loaded, /services\/control\//, 'no route');
  t.notMatch(loaded, /@aws-sdk/, 'not the S3 client');
});
