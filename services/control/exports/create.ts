import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { CreateExportBody, ExportSchema } from '../../../shared/api/exports.js';
import { insertExport } from '../../domain/exports/store.js';
import type { NewExport } from '../../domain/exports/types.js';
import { parseNewExport } from './input.js';
import { toExport } from './representation.js';

/** POST /v1/exports — an export of one kind over a window; the billing role writes it (status tells how far). */
export function createExportRoute(deps: ApiDeps): RouteDef<NewExport> {
  return {
    method: 'POST',
    path: '/v1/exports',
    auth: 'admin',
    input: parseNewExport(deps.config),
    handler: async (ctx, e) => {
      const row = await insertExport(deps.pg, ctx.principal!.accountId, e);
      return reply.created(toExport(row), `/v1/exports/${row.id}`);
    },
    doc: {
      summary: 'Export usage, invoices, lines, payments, credit notes, customers or journal entries to a file',
      tags: ['exports'],
      requestBody: CreateExportBody,
      responses: { '201': { description: 'The export, pending (Location names it)', schema: ExportSchema } },
    },
  };
}
