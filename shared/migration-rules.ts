/**
 * The rule that lets a migration run while the previous release's processes still run (docs/upgrades.md): a
 * migration only **expands** the schema — new tables, new columns that are nullable or have a default, new
 * indexes, relaxed constraints, backfills — so that the code of the release before keeps working against it
 * during the rolling restart that follows. Whatever removes or changes what that code reads or writes (drop,
 * rename, retype, a column made NOT NULL, a default dropped, a key removed) is a **contract** migration: it ships
 * one release later, once no process of a release that uses the object runs, and says so in its first line
 * (`-- contract: <what no running release uses any more, since which release>`).
 *
 * `checkMigration` finds the statements that break the rule, for the migration test (and a reviewer). It reads
 * the SQL the runner reads (statements separated by `;` at line end, `--` comments dropped).
 */

export interface RuleBreak {
  file: string;
  statement: string;
  why: string;
}

interface Pattern {
  test: RegExp;
  why: string;
  /** Only for this kind of server. */
  only?: 'postgres' | 'clickhouse';
}

const PATTERNS: Pattern[] = [
  {
    test: /\bDROP\s+(TABLE|VIEW|MATERIALIZED\s+VIEW|SEQUENCE|TYPE|FUNCTION|DATABASE)\b/i,
    why: 'drops what the previous release may use',
  },
  { test: /\bDROP\s+COLUMN\b/i, why: 'drops a column the previous release may read or write' },
  { test: /\bRENAME\b/i, why: 'renames what the previous release names' },
  {
    test: /\bALTER\s+COLUMN\s+\S+\s+(SET\s+DATA\s+)?TYPE\b/i,
    why: 'changes a column type under the previous release',
    only: 'postgres',
  },
  { test: /\bMODIFY\s+COLUMN\b/i, why: 'changes a column under the previous release', only: 'clickhouse' },
  { test: /\bSET\s+NOT\s+NULL\b/i, why: 'makes a column required that the previous release may leave out' },
  {
    test: /\bALTER\s+COLUMN\s+\S+\s+DROP\s+DEFAULT\b/i,
    why: 'drops a default the previous release relies on when it leaves the column out',
  },
  {
    test: /\bDROP\s+CONSTRAINT\s+(IF\s+EXISTS\s+)?\S*(_pkey|_key)\b/i,
    why: 'drops a key the previous release may rely on (ON CONFLICT, lookups)',
    only: 'postgres',
  },
];

/** `ADD COLUMN … NOT NULL` with no DEFAULT: the previous release's INSERTs don't name the column. */
function requiredColumnWithoutDefault(statement: string): boolean {
  return /\bADD\s+COLUMN\b/i.test(statement) && /\bNOT\s+NULL\b/i.test(statement) && !/\bDEFAULT\b/i.test(statement);
}

/** Statements as the migration runner splits them (shared/migrate.ts). */
export function migrationStatements(sql: string): string[] {
  return sql
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.replace(/^[ \t]*--.*$/gm, '').trim())
    .filter(Boolean);
}

export const CONTRACT_MARKER = /^--\s*contract:\s*\S/;

export function checkMigration(kind: 'postgres' | 'clickhouse', file: string, sql: string): RuleBreak[] {
  if (CONTRACT_MARKER.test(sql.trimStart())) return [];
  const out: RuleBreak[] = [];
  for (const statement of migrationStatements(sql)) {
    const flat = statement.replace(/\s+/g, ' ');
    for (const p of PATTERNS)
      if ((!p.only || p.only === kind) && p.test.test(flat)) out.push({ file, statement: flat, why: p.why });
    if (kind === 'postgres' && requiredColumnWithoutDefault(flat))
      out.push({ file, statement: flat, why: 'adds a required column the previous release does not write' });
  }
  return out;
}
