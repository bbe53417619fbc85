import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, whether running from `dist/shared/` or elsewhere inside the repo. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function repoPath(...parts: string[]): string {
  return resolve(REPO_ROOT, ...parts);
}

/** Where the local stack keeps `.data/`: the repository, or METERLINE_ROOT (a second stack beside the first). */
export const STACK_ROOT = process.env.METERLINE_ROOT ? resolve(process.env.METERLINE_ROOT) : REPO_ROOT;

/** SECRET_KEY of the local stack when the environment sets none: `.data/secret.key` beside its servers' data. */
export function stackSecretFile(): string {
  return resolve(STACK_ROOT, '.data', 'secret.key');
}
