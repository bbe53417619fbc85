#!/usr/bin/env node
// The CLI runs from the compiled output; `npm run build` (or npm start/test) produces it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const entry = new URL('../dist/services/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(JSON.stringify({ error: 'not built: run "npm run build" first' }) + '\n');
  process.exit(1);
}
await import(entry.href);
