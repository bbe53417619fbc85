import { configTable } from './config-table.js';
import { apiReference } from './api-reference.js';
import { servedOpenApiDocument } from './served-openapi.js';
import { withGeneratedRegion } from './generated-region.js';

/** A doc with generated parts: `render(current text)` gives the text it should have. */
export interface GeneratedDoc {
  file: string;
  render(current: string): string;
}

export const CONFIG_DOC: GeneratedDoc = {
  file: 'docs/operations.md',
  render: (current) => withGeneratedRegion(current, 'config-table', configTable()),
};

export function apiDoc(openApi: Record<string, unknown>): GeneratedDoc {
  return {
    file: 'docs/api.md',
    render: (current) => withGeneratedRegion(current, 'api-reference', apiReference(openApi)),
  };
}

export async function generatedDocs(): Promise<GeneratedDoc[]> {
  return [CONFIG_DOC, apiDoc(await servedOpenApiDocument())];
}
