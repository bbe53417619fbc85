/**
 * The generated parts of the docs sit between two markers, so the prose around them stays hand-written:
 *
 *   <!-- generated:config-table (npm run docs) -->
 *   …
 *   <!-- /generated:config-table -->
 */
const begin = (name: string) => `<!-- generated:${name} (npm run docs) -->`;
const end = (name: string) => `<!-- /generated:${name} -->`;

/** What sits between the markers of `name` in `text`; throws when they are missing. */
export function generatedRegion(text: string, name: string): string {
  const from = text.indexOf(begin(name));
  const to = text.indexOf(end(name));
  if (from < 0 || to < from) throw new Error(`no generated region "${name}" (markers ${begin(name)} … ${end(name)})`);
  return text
    .slice(from + begin(name).length, to)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}

/** `text` with the region `name` replaced by `content`. */
export function withGeneratedRegion(text: string, name: string, content: string): string {
  generatedRegion(text, name); // throws when the markers are missing
  const from = text.indexOf(begin(name)) + begin(name).length;
  const to = text.indexOf(end(name));
  return `${text.slice(0, from)}\n${content}\n${text.slice(to)}`;
}

export const regionMarkers = (name: string) => ({ begin: begin(name), end: end(name) });
