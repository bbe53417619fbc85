import { EVENT_DATA, descriptionOf } from '../../shared/api/events.js';
import { EVENT_TYPES } from '../../shared/vocabulary.js';

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
}

/** An object's fields as `{a, b?, c: {d, e}}`: `?` marks a field that may be absent; nested objects show their fields. */
function fieldsOf(s: Schema): string {
  const required = new Set(s.required ?? []);
  const fields = Object.entries(s.properties ?? {}).map(([name, field]) => {
    const object = [field, ...(field.anyOf ?? [])].find((x) => x.type === 'object' && x.properties);
    const shown = `${name}${required.has(name) ? '' : '?'}`;
    return object && name === 'previous_attributes' ? `${shown}: ${fieldsOf(object).replace(/\?/g, '')}` : shown;
  });
  return `{${fields.join(', ')}}`;
}

/** The payload table of docs/webhooks.md ("Receiving webhooks"), one row per event type, from its schema. */
export function eventPayloadTable(): string {
  const rows = EVENT_TYPES.map(
    (type) => `| \`${type}\` | \`${fieldsOf(EVENT_DATA[type] as Schema)}\` | ${descriptionOf(type)} |`,
  );
  return ['| type | data | when |', '|---|---|---|', ...rows].join('\n');
}
