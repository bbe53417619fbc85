#!/usr/bin/env node
// Runs before `npm start` and `npm test`: installs dependencies when node_modules is missing, then compiles
// (tsc), builds the web console (vite, into dist/console/; see services/console/web/) and the installable
// package of meterline/client (dist/client-package/, bin/build-client.js).
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
const root = fileURLToPath(new URL('..', import.meta.url));
const run = (cmd) => execSync(cmd, { cwd: root, stdio: ['ignore', 2, 2] });
if (!existsSync(`${root}/node_modules/.package-lock.json`)) run('npm ci --no-audit --no-fund');
run('npx tsc -p tsconfig.json');
run('node bin/build-console.js');
run('node bin/build-client.js');
