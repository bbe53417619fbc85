#!/usr/bin/env node
// Builds the installable package of `meterline/client` into dist/client-package/: the client's JS and .d.ts
// (shared/client/tsconfig.json; they import nothing of the server) and a package.json naming `ws` as its one
// dependency, so another project installs it from a path or a packed tarball (docs/client.md).
// `--pack`: then `npm pack` it into dist/ and print the tarball's path.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const out = `${root}/dist/client-package`;
rmSync(out, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/shared/client/tsconfig.json`],
  {
    stdio: ['ignore', 2, 2],
  },
);
const app = JSON.parse(readFileSync(`${root}/package.json`, 'utf8'));
const manifest = {
  name: 'meterline',
  version: app.version,
  description: 'meterline/client: the typed API client, the usage emitter and the usage stream of meterline',
  // Installed from a path or a tarball, never published under a name that may be someone else's.
  private: true,
  license: app.license,
  type: 'module',
  engines: app.engines,
  exports: {
    './client': { types: './client/index.d.ts', default: './client/index.js' },
    './package.json': './package.json',
  },
  files: ['client/'],
  dependencies: { ws: app.dependencies.ws },
};
writeFileSync(`${out}/package.json`, `${JSON.stringify(manifest, null, 2)}\n`);
if (process.argv.includes('--pack')) {
  const packed = execFileSync('npm', ['pack', out, '--pack-destination', `${root}/dist`, '--json'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 2],
  });
  process.stdout.write(`${root}/dist/${JSON.parse(packed)[0].filename}\n`);
}
