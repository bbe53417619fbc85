import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, whether running from `dist/shared/` or elsewhere inside the repo. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function repoPath(...parts: string[]): string {
  return resolve(REPO_ROOT, ...parts);
}
