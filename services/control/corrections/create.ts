import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { takenRecordIds } from '../../../shared/usage/corrections.js';
import type { UsageShards } from '../../../shared/usage/shards.js';
import { CorrectionSchema, CreateCorrectionDoc, toCorrection } from './schemas.js';
import { checkCorrection, parseCreateCorrection, refuseTakenIds, type CorrectionRequest } from './input.js';
import { insertCorrection, meterForCorrection } from './store.js';
import { applyCorrection } from './apply.js';

/**
 * POST /v1/meters/{meter_id}/usage/corrections — cancel records, or replace a range's records, of one meter.
 * Recorded in Postgres first (pending), then applied, then marked applied: a failure in between leaves a
 * pending correction that the module's sweep applies again (every step is idempotent). The pipeline's
 * idempotency step answers a retry carrying the same Idempotency-Key with the stored answer.
 */
export function createCorrectionRoute(deps: ApiDeps, shards: () => UsageShards): RouteDef<CorrectionRequest> {
  const database = deps.config.CLICKHOUSE_DATABASE;
  return {
    method: 'POST',
    path: '/v1/meters/:meter_id/usage/corrections',
    auth: 'write',
    input: parseCreateCorrection,
    handler: async (ctx, req) => {
      const { accountId, userId, clientId } = ctx.principal!;
      const meterId = ctx.params.meter_id!;
      const meter = await meterForCorrection(deps.pg, accountId, meterId);
      const correction = checkCorrection(req, meter, accountId);
      if (correction.kind === 'replace') refuseTakenIds(correction.ids, await takenRecordIds(deps.clickhouse, database, accountId, meterId, correction.ids, correction.startMs, correction.endMs));
      const pending = await insertCorrection(deps.pg, accountId, meterId, correction, { userId, clientId });
      const applied = await applyCorrection(deps.pg, shards(), database, pending);
      return reply.json(201, toCorrection(applied));
    },
    doc: {
      summary: 'Correct a meter’s usage: cancel records by id, or replace every record of a time range; cancelled records stop counting in reads, rollups and invoices (an invoiced period gets an adjustment on the next invoice). Idempotent with Idempotency-Key',
      tags: ['usage'],
      requestBody: CreateCorrectionDoc,
      responses: { '201': { description: 'The correction, applied', schema: CorrectionSchema } },
    },
  };
}
