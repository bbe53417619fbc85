/** The versioned SQL files of infra/migrations/<kind>/ and how one is split into statements. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoPath } from './paths.js';

export async function migrationFiles(dir: string): Promise<{ version: string; sql: string }[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  return Promise.all(
    names.map(async (n) => ({ version: n.replace(/\.sql$/, ''), sql: await readFile(join(dir, n), 'utf8') })),
  );
}

/** One migration file's statements: `;` at line end separates them, comment lines are dropped. */
export function sqlStatements(sql: string, database: string): string[] {
  return sql
    .replace(/\{database\}/g, database)
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.replace(/^[ \t]*--.*$/gm, '').trim())
    .filter(Boolean);
}

/** The ClickHouse migration files, in the order they apply (a backup restores its tables in this order). */
export function clickhouseMigrations(): Promise<{ version: string; sql: string }[]> {
  return migrationFiles(repoPath('infra/migrations/clickhouse'));
}
