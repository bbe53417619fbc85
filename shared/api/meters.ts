import Type from 'typebox';
import { PrintableText } from './text.js';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { DIMENSION_LIMITS, KEY_MESSAGE } from '../usage/dimensions.js';
import {
  AGGREGATIONS,
  MAX_DECLARED_DIMENSIONS,
  METER_KEY_PATTERN,
  METER_SCOPES,
  METER_TYPES,
} from '../meters/record.js';

const ALL_AGGREGATIONS = [...new Set(Object.values(AGGREGATIONS).flat())];

const MeterTypeSchema = Type.Enum([...METER_TYPES], {
  description: 'counter (values add up), gauge (sets a value), histogram (a distribution); default counter',
});
const AggregationSchema = Type.Enum(ALL_AGGREGATIONS, {
  description:
    'counter: sum|count|unique_count; gauge: last|max|min|avg; histogram: sum|count|min|max|avg|p50|p90|p95|p99',
});
const DimensionKey = Type.String({ pattern: DIMENSION_LIMITS.keyPattern.source, errorMessage: KEY_MESSAGE });
const DeclaredDimensions = Type.Array(DimensionKey, {
  maxItems: MAX_DECLARED_DIMENSIONS,
  uniqueItems: true,
  description:
    'dimension keys records of this meter may carry; empty (default): any keys. Keys can be added later, never removed',
});
const UniqueBy = Type.String({
  pattern: DIMENSION_LIMITS.keyPattern.source,
  errorMessage: KEY_MESSAGE,
  description:
    'aggregation unique_count only (required there): the dimension whose distinct values are counted; fixed once created',
});
const StatusSchema = Type.Enum(['active', 'inactive']);
const ScopeSchema = Type.Enum([...METER_SCOPES], {
  description:
    'account (default): the caller’s account’s meter; deployment (admin only): one meter for every customer — each records and reads its own usage, an admin token records for any customer',
});
const Name = PrintableText({ maxLength: 200 });
const Key = Type.String({
  pattern: METER_KEY_PATTERN.source,
  errorMessage: 'must be 1–64 of a-z, 0-9, _ and -, starting with a letter, and not start with mtr_',
  description:
    'a unique name for the meter (per account; per deployment for a deployment meter), accepted by the ingest routes in place of its id; fixed once set',
  examples: ['llm_tokens'],
});
const Unit = PrintableText({ maxLength: 64, examples: ['requests'] });

export const MeterSchema = Type.Object(
  {
    id: Type.String({ examples: ['mtr_4kQ9sP2xR7mV1rT8bN3cJ0'] }),
    name: Type.String(),
    unit: Type.String(),
    type: MeterTypeSchema,
    aggregation: AggregationSchema,
    dimensions: DeclaredDimensions,
    unique_by: Type.Union([Type.String(), Type.Null()]),
    status: StatusSchema,
    scope: ScopeSchema,
    key: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const MeterListSchema = listOf(MeterSchema);

export const CreateMeterBody = Type.Object(
  {
    name: Name,
    unit: Unit,
    type: Type.Optional(MeterTypeSchema),
    aggregation: AggregationSchema,
    dimensions: Type.Optional(DeclaredDimensions),
    unique_by: Type.Optional(UniqueBy),
    scope: Type.Optional(ScopeSchema),
    key: Type.Optional(Key),
  },
  { additionalProperties: false },
);
export type CreateMeterBody = Type.Static<typeof CreateMeterBody>;

/** type and aggregation are accepted only to say clearly that they cannot change (422 when they differ). */
export const UpdateMeterBody = Type.Object(
  {
    name: Type.Optional(Name),
    unit: Type.Optional(Unit),
    status: Type.Optional(StatusSchema),
    type: Type.Optional(MeterTypeSchema),
    aggregation: Type.Optional(AggregationSchema),
    dimensions: Type.Optional({
      ...DeclaredDimensions,
      description: 'the full new list: every declared key must stay (add only)',
    }),
    key: Type.Optional({ ...Key, description: 'sets the key of a meter that has none; a key is fixed once set' }),
  },
  { additionalProperties: false },
);
export type UpdateMeterBody = Type.Static<typeof UpdateMeterBody>;

export const ListMetersQuery = Type.Object(
  { ...PaginationQuery, status: Type.Optional(StatusSchema), key: Type.Optional(Key) },
  { additionalProperties: false },
);
export type ListMetersQuery = Type.Static<typeof ListMetersQuery>;
