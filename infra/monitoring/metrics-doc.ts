/**
 * docs/metrics.md's table of metrics, generated from what the roles register: each role's live `/metrics`
 * (its `# HELP` and `# TYPE` lines) → one row per metric name with its type, the roles exporting it and its
 * help text. test/e2e/monitoring.test.ts scrapes every role and fails when the committed table differs
 * (UPDATE_DOCS=1 rewrites it), so the document cannot drift from the code.
 */

export interface ExposedMetric {
  name: string;
  type: string;
  help: string;
}

/** The metrics described in a Prometheus text exposition (names as registered, not per-sample suffixes). */
export function parseExposition(text: string): ExposedMetric[] {
  const byName = new Map<string, ExposedMetric>();
  const get = (name: string) => {
    let m = byName.get(name);
    if (!m) byName.set(name, (m = { name, type: 'untyped', help: '' }));
    return m;
  };
  for (const line of text.split('\n')) {
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    if (help) get(help[1]!).help = help[2]!.replace(/\\n/g, ' ').replace(/\\\\/g, '\\');
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) get(type[1]!).type = type[2]!;
  }
  return [...byName.values()];
}

/** Sample names a metric produces: a histogram's `_bucket`/`_sum`/`_count`, a summary's `_sum`/`_count`. */
export function sampleNames(m: ExposedMetric): string[] {
  if (m.type === 'histogram') return [m.name, `${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`];
  if (m.type === 'summary') return [m.name, `${m.name}_sum`, `${m.name}_count`];
  return [m.name];
}

const ROLE_ORDER = ['api', 'consumer', 'dispatcher', 'billing'];

function cell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** The table: meterline's own metrics first, then the Node.js process metrics every role exports. */
export function renderMetricsTable(byRole: Record<string, ExposedMetric[]>): string {
  const rows = new Map<string, { m: ExposedMetric; roles: string[] }>();
  for (const role of ROLE_ORDER.filter((r) => byRole[r])) {
    for (const m of byRole[role]!) {
      const row = rows.get(m.name);
      if (row) row.roles.push(role);
      else rows.set(m.name, { m, roles: [role] });
    }
  }
  const own = (n: string) => (n.startsWith('meterline_') ? 0 : 1);
  const sorted = [...rows.values()].sort((a, b) => own(a.m.name) - own(b.m.name) || a.m.name.localeCompare(b.m.name));
  const lines = ['| metric | type | roles | meaning |', '|---|---|---|---|'];
  for (const { m, roles } of sorted) {
    const who = roles.length === ROLE_ORDER.length ? 'every role' : roles.join(', ');
    lines.push(`| \`${m.name}\` | ${m.type} | ${who} | ${cell(m.help)} |`);
  }
  return lines.join('\n');
}

export const TABLE_BEGIN =
  '<!-- metrics table: generated from the roles’ /metrics by test/e2e/monitoring.test.ts (UPDATE_DOCS=1) -->';
export const TABLE_END = '<!-- end of generated metrics table -->';

/** The generated part of the document, or null when its markers are missing. */
export function tableOf(doc: string): string | null {
  const a = doc.indexOf(TABLE_BEGIN);
  const b = doc.indexOf(TABLE_END);
  if (a < 0 || b < a) return null;
  return doc.slice(a + TABLE_BEGIN.length, b).trim();
}

export function withTable(doc: string, table: string): string {
  const a = doc.indexOf(TABLE_BEGIN);
  const b = doc.indexOf(TABLE_END);
  if (a < 0 || b < a) throw new Error('docs/metrics.md has no generated-table markers');
  return `${doc.slice(0, a + TABLE_BEGIN.length)}\n${table}\n${doc.slice(b)}`;
}
