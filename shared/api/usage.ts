import Type from 'typebox';
import { USAGE_WINDOWS } from '../usage/windows.js';
import { DIMENSION_LIMITS } from '../usage/dimensions.js';
import { MAX_GROUPS } from '../usage/limits.js';

export const MAX_GROUP_BY = 4;
/** Distinct filter keys, and values of one key, per request. */
export const MAX_FILTER_KEYS = 8;
export const MAX_FILTER_VALUES = 100;

export const UsageQueryParams = Type.Object(
  {
    start_date: Type.Optional(
      Type.String({ format: 'date', description: 'YYYY-MM-DD, inclusive; default: first day of end_date’s month' }),
    ),
    end_date: Type.Optional(
      Type.String({ format: 'date', description: 'YYYY-MM-DD, inclusive; default: today (UTC)' }),
    ),
    window: Type.Optional(Type.Enum([...USAGE_WINDOWS], { description: 'default day' })),
    group_by: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_GROUP_BY * 65,
        description: `comma-separated dimension keys (at most ${MAX_GROUP_BY}), e.g. model,region: the answer gains \`groups\`, one per combination of values (at most ${MAX_GROUPS}, else 422 too_many_groups)`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type UsageQueryParams = Type.Static<typeof UsageQueryParams>;

/**
 * The query as documented: the validated parameters plus `filter[<key>]=<value>` (a deepObject parameter;
 * input.ts takes it out before the schema sees the rest).
 */
export const UsageQueryDoc = Type.Object({
  ...UsageQueryParams.properties,
  filter: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: DIMENSION_LIMITS.maxValueLength }), {
      style: 'deepObject',
      description: `filter[<dimension>]=<value>: only records whose dimension equals the value (exact match). Repeat a key for any of several values (at most ${MAX_FILTER_VALUES}); several keys (at most ${MAX_FILTER_KEYS}) must all match`,
    }),
  ),
});

const Num = Type.Union([Type.Number(), Type.Null()]);
const HistogramFields = {
  min: Type.Optional(Num),
  max: Type.Optional(Num),
  avg: Type.Optional(Num),
  p50: Type.Optional(Num),
  p90: Type.Optional(Num),
  p95: Type.Optional(Num),
  p99: Type.Optional(Num),
};

export const UsageWindowSchema = Type.Object({
  start: Type.String({ format: 'date-time' }),
  end: Type.String({ format: 'date-time', description: 'exclusive' }),
  value: Num,
  count: Type.Integer(),
  ...HistogramFields,
});

export const UsageGroupSchema = Type.Object({
  dimensions: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), {
    description: 'the group_by keys; null: records without that dimension',
  }),
  value: Num,
  count: Type.Integer(),
  ...HistogramFields,
  data: Type.Array(UsageWindowSchema, { description: 'every window of the range, zero-filled' }),
});

export const MeterUsageSchema = Type.Object({
  meter_id: Type.String(),
  type: Type.Enum(['counter', 'gauge', 'histogram']),
  aggregation: Type.String(),
  unit: Type.String(),
  start_date: Type.String({ format: 'date' }),
  end_date: Type.String({ format: 'date' }),
  window: Type.Enum([...USAGE_WINDOWS]),
  value: Num,
  count: Type.Integer(),
  ...HistogramFields,
  data: Type.Array(UsageWindowSchema),
  filters: Type.Optional(
    Type.Record(Type.String(), Type.Array(Type.String()), { description: 'the filter[...] the answer applied' }),
  ),
  group_by: Type.Optional(Type.Array(Type.String())),
  groups: Type.Optional(
    Type.Array(UsageGroupSchema, { description: 'with group_by: one per combination of values present, sorted' }),
  ),
});
