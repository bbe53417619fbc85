import { configTable } from './config-table.js';
import { apiReference } from './api-reference.js';
import { servedOpenApiDocument } from './served-openapi.js';
import { withGeneratedRegion } from './generated-region.js';
import { eventPayloadTable } from './event-payloads.js';

/** A doc with generated parts: `render(current text)` gives the text it should have. */
export interface GeneratedDoc {
  file: string;
  render(current: string): string;
}

export const CONFIG_DOC: GeneratedDoc = {
  file: 'docs/operations.md',
  render: (current) => withGeneratedRegion(current, 'config-table', configTable()),
};

/** docs/webhooks.md: the payload of every event type, from the catalogue (shared/api/events.ts). */
export const WEBHOOKS_DOC: GeneratedDoc = {
  file: 'docs/webhooks.md',
  render: (current) => withGeneratedRegion(current, 'event-payloads', eventPayloadTable()),
};

export function apiDoc(openApi: Record<string, unknown>): GeneratedDoc {
  return {
    file: 'docs/api.md',
    render: (current) => withGeneratedRegion(current, 'api-reference', apiReference(openApi)),
  };
}

export async function generatedDocs(): Promise<GeneratedDoc[]> {
  return [CONFIG_DOC, WEBHOOKS_DOC, apiDoc(await servedOpenApiDocument())];
}
