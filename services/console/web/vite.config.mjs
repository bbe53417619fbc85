// Builds the console SPA into dist/console/ (served by services/console/module.ts at /console).
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../../dist/console', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
});
