import type { ApiDeps, RouteDef } from '../../../shared/http/route.js';
import { reply } from '../../../shared/http/reply.js';
import { problemResponse } from '../../../shared/http/problems.js';
import { countingRecordIds, takenRecordIds } from '../../domain/usage/corrections-store.js';
import type { UsageShards } from '../../../shared/clients/usage-shards.js';
import { CorrectionSchema, CreateCorrectionDoc } from '../../../shared/api/corrections.js';
import { toCorrection } from './representation.js';
import { checkCorrection, parseCreateCorrection, refuseTakenIds, type CorrectionRequest } from './input.js';
import {
  correctedAccount,
  insertCorrection,
  meterForCorrection,
  withMeterCorrectionLock,
} from '../../domain/corrections/store.js';
import { applyCorrection, completePendingOfMeter } from '../../domain/corrections/apply.js';
import type { UsageMoved } from '../../domain/usage/usage-moved.js';

/**
 * POST /v1/meters/{meter_id}/usage/corrections — cancel records, or replace a range's records, of one meter.
 * Recorded in Postgres first (pending), then applied, then marked applied, under the meter's correction lock
 * (corrections of one meter apply one at a time, in order): a failure in between leaves a pending correction
 * that the next correction of the meter or the module's sweep applies again (every step is idempotent). The pipeline's
 * idempotency step answers a retry carrying the same Idempotency-Key with the stored answer.
 */
export function createCorrectionRoute(
  deps: ApiDeps,
  shards: () => UsageShards,
  moved?: UsageMoved,
): RouteDef<CorrectionRequest> {
  const database = deps.config.CLICKHOUSE_DATABASE;
  return {
    method: 'POST',
    path: '/v1/meters/:meter_id/usage/corrections',
    auth: 'write',
    input: parseCreateCorrection,
    handler: async (ctx, req) => {
      const { userId, clientId } = ctx.principal!;
      const meterId = ctx.params.meter_id!;
      const meter = await meterForCorrection(deps.pg, ctx.principal!.accountId, meterId);
      // Whose records: the meter's account's, or on a deployment meter the customer named.
      const accountId = await correctedAccount(deps.pg, meter, req.customer);
      const correction = checkCorrection(req, meter, accountId);
      let cancelled: string[] | undefined;
      const applied = await withMeterCorrectionLock(deps.pg, accountId, meterId, async () => {
        // One at a time per meter, in the order recorded: an earlier one left pending (interrupted) goes first.
        await completePendingOfMeter(deps.pg, shards(), database, accountId, meterId, moved);
        if (correction.kind === 'replace')
          refuseTakenIds(
            correction.ids,
            await takenRecordIds(
              deps.clickhouse,
              database,
              accountId,
              meterId,
              correction.ids,
              correction.startMs,
              correction.endMs,
            ),
          );
        if (correction.kind === 'cancel') {
          const counting = await countingRecordIds(deps.clickhouse, database, accountId, meterId, correction.ids);
          cancelled = correction.ids.filter((id) => counting.has(id));
        }
        const pending = await insertCorrection(deps.pg, accountId, meterId, correction, { userId, clientId });
        return applyCorrection(deps.pg, shards(), database, pending, moved);
      });
      return reply.json(201, { ...toCorrection(applied), ...(cancelled ? { cancelled_records: cancelled } : {}) });
    },
    doc: {
      summary:
        'Correct a meter’s usage: cancel records by id, or replace every record of a time range; cancelled records stop counting in reads, rollups and invoices (an invoiced period gets an adjustment on the next invoice). Idempotent with Idempotency-Key',
      tags: ['usage'],
      requestBody: CreateCorrectionDoc,
      responses: {
        '201': {
          description:
            'The correction, applied. The same request again with the same Idempotency-Key (24 h) replays this answer (`Idempotent-Replayed: true`) and changes nothing',
          schema: CorrectionSchema,
        },
        '404': problemResponse('no such meter in this account (`not_found`)'),
        '409': problemResponse(
          'the Idempotency-Key was used with a different body (`idempotency_conflict`) or its first request is still running (`idempotency_in_progress`)',
        ),
        '422': problemResponse(
          '`validation_failed`: not exactly one of cancel/replace, a bad range, a replacement record breaking the ingest rules, or a replacement id already taken (`replace.records[i].id`: the id of a record stored in the range or of a cancelled one — what repeating an applied replace with ids gets)',
        ),
        '503': problemResponse(
          'another correction of this meter kept it busy for 30 s (`busy`, Retry-After); nothing was done',
        ),
      },
    },
  };
}
