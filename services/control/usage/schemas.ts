import Type from 'typebox';
import { USAGE_WINDOWS } from '../../../shared/usage/windows.js';

export const UsageQueryParams = Type.Object(
  {
    start_date: Type.Optional(Type.String({ format: 'date', description: 'YYYY-MM-DD, inclusive; default: first day of end_date’s month' })),
    end_date: Type.Optional(Type.String({ format: 'date', description: 'YYYY-MM-DD, inclusive; default: today (UTC)' })),
    window: Type.Optional(Type.Enum([...USAGE_WINDOWS], { description: 'default day' })),
  },
  { additionalProperties: false },
);
export type UsageQueryParams = Type.Static<typeof UsageQueryParams>;

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
});
