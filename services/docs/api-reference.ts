/**
 * docs/api.md from the OpenAPI document the api serves: one section per operation (scope, parameters, the
 * request body's fields, the responses and their fields), in the document's order. The prose around the
 * routes (what a field means for billing, the worked examples) is in the topic guides docs/api.md links to.
 */
type Schema = Record<string, any>;
type Operation = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const MAX_DEPTH = 4;

const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** A schema's type as one short phrase: `string (date-time)`, `integer 1–1000`, `"hour" | "day"`, `array of object`. */
export function typeOf(s: Schema | undefined): string {
  if (!s) return 'any';
  if (s.$ref) return String(s.$ref).split('/').pop()!;
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const alternatives = [...new Set<string>((s.anyOf ?? s.oneOf).map((x: Schema) => typeOf(x)))];
    return alternatives.every((x) => x.startsWith('"')) ? alternatives.join(' | ') : alternatives.join(' or ');
  }
  const type = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? (s.properties ? 'object' : 'any'));
  const parts = [type === 'array' ? `array of ${typeOf(s.items)}` : type];
  if (s.format) parts.push(`(${s.format})`);
  const range = (lo: unknown, hi: unknown, exLo: unknown, exHi: unknown) => {
    const low = lo !== undefined ? `≥ ${lo}` : exLo !== undefined ? `> ${exLo}` : undefined;
    const high = hi !== undefined ? `≤ ${hi}` : exHi !== undefined ? `< ${exHi}` : undefined;
    return [low, high].filter(Boolean).join(', ');
  };
  const numbers = range(s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum);
  if (numbers) parts.push(numbers);
  const count = (min: number | undefined, max: number | undefined, what: string) =>
    min !== undefined && max !== undefined
      ? `${min}–${max} ${what}`
      : min !== undefined
        ? `≥ ${min} ${what}`
        : max !== undefined
          ? `≤ ${max} ${what}`
          : undefined;
  const length = count(s.minLength, s.maxLength, 'characters');
  if (length) parts.push(length);
  const items = count(s.minItems, s.maxItems, 'items');
  if (items) parts.push(items);
  if (s.pattern) parts.push(`matching \`${s.pattern}\``);
  return parts.join(' ');
}

/** The object (or array of objects) a schema describes, if any: the one whose fields get listed. */
function objectOf(s: Schema | undefined): Schema | undefined {
  if (!s) return undefined;
  if (s.properties) return s;
  if (s.type === 'array') return objectOf(s.items);
  const objects = (s.anyOf ?? s.oneOf ?? []).filter((alt: Schema) => alt.properties);
  if (objects.length > 1) return commonShape(objects, s.description);
  for (const alt of s.anyOf ?? s.oneOf ?? []) {
    const o = objectOf(alt);
    if (o) return o;
  }
  return undefined;
}

/**
 * Alternative objects with the same fields (a union keyed by one of them, like the events' `type`) as one object
 * whose fields are the alternatives of each; fields that differ in shape (the events' `data`) are listed once, their
 * own fields not (each alternative's are documented with the union's key: docs/webhooks.md for the events).
 */
function commonShape(objects: Schema[], description = 'one shape per alternative'): Schema | undefined {
  const keys = Object.keys(objects[0]!.properties);
  if (!objects.every((o) => Object.keys(o.properties).join() === keys.join())) return objects[0];
  const properties: Record<string, Schema> = {};
  for (const key of keys) {
    const fields: Schema[] = objects.map((o) => o.properties[key]);
    const distinct = [...new Map(fields.map((f) => [JSON.stringify(f), f])).values()];
    properties[key] =
      distinct.length === 1
        ? distinct[0]!
        : distinct.every((f) => f.properties)
          ? { type: 'object', description }
          : { anyOf: distinct };
  }
  return { ...objects[0], properties };
}

/** Rows `| field | type | required | description |` for an object's fields, nested ones as `a.b` / `a[].b`. */
export function fieldRows(s: Schema | undefined, prefix = '', depth = 0): string[] {
  const object = objectOf(s);
  if (!object || depth >= MAX_DEPTH) return [];
  const required = new Set<string>(object.required ?? []);
  const rows: string[] = [];
  for (const [name, field] of Object.entries<Schema>(object.properties ?? {})) {
    const path = `${prefix}${name}`;
    rows.push(
      `| \`${path}\` | ${cell(typeOf(field))} | ${required.has(name) ? 'yes' : ''} | ${cell(field.description ?? '')} |`,
    );
    const inner = objectOf(field);
    if (inner) {
      const array = field.type === 'array' || (field.anyOf ?? []).some((x: Schema) => x.type === 'array');
      rows.push(...fieldRows(inner, `${path}${array ? '[]' : ''}.`, depth + 1));
    }
  }
  if (object.patternProperties)
    rows.push(`| \`${prefix}<key>\` | ${cell(typeOf(Object.values(object.patternProperties)[0] as Schema))} | | |`);
  return rows;
}

/** The array a body or response is, when it is one (directly or as one of its alternatives). */
const arrayOf = (s: Schema | undefined): Schema | undefined =>
  s?.type === 'array' ? s : (s?.anyOf ?? s?.oneOf ?? []).find((x: Schema) => x.type === 'array');

function fieldsTable(s: Schema | undefined): string[] {
  const rows = fieldRows(s);
  if (!rows.length) return s ? [`A ${typeOf(s)}.`, ''] : [];
  const array = arrayOf(s);
  const alternatives = (s?.anyOf ?? s?.oneOf ?? []).length > 1;
  const intro = array
    ? [
        `${alternatives ? 'One object, or a' : 'A'} JSON array${array.maxItems !== undefined ? ` of ${array.minItems ?? 0}–${array.maxItems}` : ''} objects with these fields:`,
        '',
      ]
    : [];
  return [...intro, '| field | type | required | description |', '|---|---|---|---|', ...rows, ''];
}

const scopeOf = (op: Operation) => {
  const scopes: string[] = (op.security ?? []).flatMap((r: Record<string, string[]>) => Object.values(r).flat());
  return scopes.length ? `\`${scopes.join(' ')}\`` : 'none (public)';
};

/** A heading's GitHub anchor: `GET /v1/meters/{meter_id}` → `get-v1metersmeter_id`. */
export const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

function renderOperation(method: string, path: string, op: Operation): string[] {
  const summary = String(op.summary ?? '').replace(/\.$/, '');
  const out = [`### ${method.toUpperCase()} ${path}`, '', `${summary}. Scope: ${scopeOf(op)}.`, ''];
  const params: Schema[] = op.parameters ?? [];
  if (params.length) {
    out.push('| parameter | in | type | required | description |', '|---|---|---|---|---|');
    for (const p of params)
      out.push(
        `| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${cell(p.description ?? '')} |`,
      );
    out.push('');
  }
  for (const [mediaType, body] of Object.entries<Schema>(op.requestBody?.content ?? {})) {
    if (mediaType === 'application/x-www-form-urlencoded') {
      out.push('Body: the same fields as `application/x-www-form-urlencoded` too.', '');
      continue;
    }
    out.push(`Body (\`${mediaType}\`):`, '', ...fieldsTable(body.schema));
  }
  for (const [status, response] of Object.entries<Schema>(op.responses ?? {})) {
    const [mediaType, content] = Object.entries<Schema>(response.content ?? {})[0] ?? [];
    const problem = mediaType === 'application/problem+json';
    out.push(`- **${status}** ${response.description}${mediaType && !problem ? ` (\`${mediaType}\`)` : ''}`);
    if (content && !problem) {
      const rows = fieldsTable(content.schema);
      if (rows.length) out.push('', ...rows.map((r) => (r ? `  ${r}` : r)));
    }
  }
  out.push('');
  return out;
}

export function apiReference(doc: Record<string, any>): string {
  const byTag = new Map<string, string[]>();
  const index: string[] = [];
  for (const [path, item] of Object.entries<Record<string, Operation>>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(...renderOperation(method, path, op));
      index.push(`${method.toUpperCase()} ${path}`);
    }
  }
  const sections = [...byTag.keys()].sort();
  const lines = [
    `${doc.info?.description ?? ''}`,
    '',
    `OpenAPI ${doc.openapi}, ${index.length} operations. Every error answer is a problem document: see`,
    '[http.md](http.md#errors-health-and-intake). Scopes nest: `admin` ⊇ `write` ⊇ `read`.',
    '',
    ...sections.map((tag) => `- [${tag}](#${anchorOf(tag)})`),
    '',
  ];
  for (const tag of sections) lines.push(`## ${tag}`, '', ...byTag.get(tag)!);
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd();
}
