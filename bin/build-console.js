#!/usr/bin/env node
// Builds the web console (services/console/web/) into dist/console/ with vite (~1.5 s of CPU). vite only
// transpiles: `npm run typecheck` type-checks the console's sources (tsc with the DOM library, ~8 s).
// A checkout whose node_modules predates the console's build dependencies gets them first (npm install
// honours package-lock.json), so `npm run build` keeps working after a pull.
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
const root = fileURLToPath(new URL('..', import.meta.url));
const run = (cmd) => execSync(cmd, { cwd: root, stdio: ['ignore', 2, 2] });
const needed = ['vite', 'preact', 'chart.js'];
const missing = needed.filter((pkg) => !existsSync(`${root}/node_modules/${pkg}/package.json`));
if (missing.length) {
  process.stderr.write(
    `[build-console] installing the console's build dependencies (${missing.join(', ')} missing): npm install\n`,
  );
  run('npm install --no-audit --no-fund');
}
run('npx vite build --config services/console/web/vite.config.mjs --logLevel warn');
