/**
 * Which build a process runs: the package version and the release id an operator's packaging writes into
 * `BUILD` at the repository (release) root, e.g. `git rev-parse --short HEAD > BUILD` (docs/upgrades.md).
 * A rolling upgrade is watched through `meterline_build_info` until every process reports the new one.
 */
import { readFileSync } from 'node:fs';
import { repoPath } from './paths.js';

export interface BuildInfo {
  version: string;
  build: string;
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8').trim() || fallback;
  } catch {
    return fallback;
  }
}

let cached: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  if (cached) return cached;
  let version = '0.0.0';
  try {
    version = (JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version?: string }).version ?? version;
  } catch {
    /* a release without package.json reports 0.0.0 */
  }
  cached = { version, build: readOr(repoPath('BUILD'), 'dev') };
  return cached;
}
