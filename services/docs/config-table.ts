import { configReference } from '../../shared/config.js';

/** docs/operations.md's configuration table, from shared/config.ts (the one schema start-up validates with). */
export function configTable(): string {
  const cell = (s: string) => s.replaceAll('|', '\\|');
  const rows = configReference().map(
    (v) => `| \`${v.variable}\` | ${cell(v.default)} | ${cell(v.allows)} | ${cell(v.meaning)} |`,
  );
  return ['| variable | default | allows | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
