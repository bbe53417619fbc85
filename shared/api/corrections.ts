import Type from 'typebox';
import { PaginationQuery, PaginationSchema } from '../http/pagination.js';
import { USAGE_LIMITS } from '../usage/limits.js';
import { UsageRecordBody } from './usage-records.js';

const RecordId = Type.String({ minLength: 1, maxLength: USAGE_LIMITS.maxRecordIdLength });
const Instant = (description: string) => Type.String({ format: 'date-time', description });

/**
 * The body as validated. `replace.records` are checked by the ingest record rules (input.ts →
 * services/ingress/batch.ts checkBatch), not here, so their problems read exactly as on the batch route;
 * CreateCorrectionDoc documents them as records.
 */
export const CreateCorrectionBody = Type.Object(
  {
    cancel: Type.Optional(
      Type.Array(RecordId, {
        minItems: 1,
        maxItems: USAGE_LIMITS.maxBatchRecords,
        description:
          'ids of records of this meter to cancel: they stop counting in every read, rollup and invoice. Final and by id: an id named twice (or in two corrections) is cancelled once; an id no record of this meter has yet (a typo, a record still in flight, another meter’s id) is accepted all the same — the answer lists the ids as named, not which matched — and a record of this meter with that id never counts when it arrives',
      }),
    ),
    customer: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          'a deployment meter (admin): the external id of the customer whose records are corrected (or customer_id); required there, refused on an account meter',
      }),
    ),
    customer_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'a deployment meter (admin): the customer’s cus_… id (or customer)',
      }),
    ),
    replace: Type.Optional(
      Type.Object(
        {
          start: Instant('RFC 3339, inclusive'),
          end: Instant('RFC 3339, exclusive; at most 366 days after start'),
          records: Type.Array(Type.Unknown(), { maxItems: USAGE_LIMITS.maxBatchRecords }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type CreateCorrectionBody = Type.Static<typeof CreateCorrectionBody>;

export const CreateCorrectionDoc = Type.Object(
  {
    cancel: CreateCorrectionBody.properties.cancel,
    customer: CreateCorrectionBody.properties.customer,
    customer_id: CreateCorrectionBody.properties.customer_id,
    replace: Type.Optional(
      Type.Object({
        start: CreateCorrectionBody.properties.replace.properties.start,
        end: CreateCorrectionBody.properties.replace.properties.end,
        records: Type.Array(UsageRecordBody, {
          maxItems: USAGE_LIMITS.maxBatchRecords,
          description:
            'the usage of [start, end) from now on: every record of the meter stored in the range is cancelled and these are stored instead (the ingest record rules, timestamps within the range). Ids must be new: not the id of a record stored in the range nor of a cancelled one — so the same replace posted again without its Idempotency-Key is refused 422 when its records carry ids (the first one stands), and applied again under new `use_…` ids when they carry none (the range still holds them once; both corrections are listed). A meter’s corrections apply one at a time in the order received: where two replaced ranges overlap, the later replace wins',
        }),
      }),
    ),
  },
  { description: 'exactly one of cancel or replace' },
);

export const CorrectionSchema = Type.Object(
  {
    id: Type.String({ examples: ['corr_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    meter_id: Type.String(),
    type: Type.Enum(['cancel', 'replace']),
    customer_id: Type.String({ description: 'cus_… of the account whose records the correction applies to' }),
    cancel: Type.Optional(Type.Array(Type.String(), { description: 'the record ids cancelled' })),
    cancelled_records: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'only in the answer of the request that applied a cancel: the ids that matched a stored, counting record of the meter (and customer) and now stop counting; an id not listed matched nothing yet (a record with it never counts when it arrives)',
      }),
    ),
    replace: Type.Optional(
      Type.Object({
        start: Type.String({ format: 'date-time' }),
        end: Type.String({ format: 'date-time' }),
        record_ids: Type.Array(Type.String(), {
          description: 'ids of the records stored in place of the range’s (assigned use_… ids included)',
        }),
      }),
    ),
    state: Type.Enum(['pending', 'applied'], {
      description: 'pending: recorded, being applied (completed automatically if interrupted)',
    }),
    created_by: Type.Object({
      user_id: Type.String({ description: 'the token’s subject' }),
      client_id: Type.String({ description: 'the token’s OAuth client' }),
    }),
    created_at: Type.String({ format: 'date-time' }),
    applied_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);

export const CorrectionListSchema = Type.Object({ data: Type.Array(CorrectionSchema), pagination: PaginationSchema });

export const ListCorrectionsQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export type ListCorrectionsQuery = Type.Static<typeof ListCorrectionsQuery>;
