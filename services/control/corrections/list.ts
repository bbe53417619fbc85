import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { pageWindow, type PageRequest } from '../../../shared/http/pagination.js';
import { reply } from '../../../shared/http/reply.js';
import { CorrectionListSchema, ListCorrectionsQuery } from '../../../shared/api/corrections.js';
import { toCorrection } from './representation.js';
import { parseListCorrections } from './input.js';
import { listCorrections, meterForCorrection } from '../../domain/corrections/store.js';

/** GET /v1/meters/{meter_id}/usage/corrections?page&per_page — the meter's corrections, newest first, with who and when. */
export function listCorrectionsRoute(deps: ApiDeps): RouteDef<PageRequest> {
  return {
    method: 'GET',
    path: '/v1/meters/:meter_id/usage/corrections',
    auth: 'read',
    input: parseListCorrections,
    handler: async (ctx, page) => {
      const accountId = ctx.principal!.accountId;
      const meterId = ctx.params.meter_id!;
      await meterForCorrection(deps.pg, accountId, meterId); // 404 for another account's meter
      const { rows, total } = await listCorrections(deps.pg, accountId, meterId, pageWindow(page));
      return reply.page(rows.map(toCorrection), page, total);
    },
    doc: {
      summary: 'List a meter’s usage corrections, newest first, with who made them and when',
      tags: ['usage'],
      query: ListCorrectionsQuery,
      responses: { '200': { description: 'A page of corrections', schema: CorrectionListSchema } },
    },
  };
}
