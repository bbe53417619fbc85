import Type from 'typebox';
import { PaginationQuery, listOf } from '../http/pagination.js';
import { EXPORT_FORMATS, EXPORT_INTERVALS, EXPORT_KINDS, EXPORT_STATUSES } from '../vocabulary.js';

/** Exports to files and object storage (docs/exports.md). */

const Path = Type.String({
  maxLength: 512,
  description: 'a relative directory below EXPORTS_LOCAL_ROOT (empty: the root itself); no `..`, no dot-names',
});
export const ExportDestination = Type.Union(
  [
    Type.Object({ type: Type.Literal('local'), path: Path }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('s3'),
        bucket: Type.String({
          pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
          description: 'an S3 bucket name (3–63 of a-z 0-9 . -)',
        }),
        prefix: Type.Optional(
          Type.String({ maxLength: 512, description: 'key prefix the objects are written under (no leading /)' }),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'where the objects go: `local` (a directory of the server) or `s3` (an S3-compatible bucket)' },
);
export type ExportDestination = Type.Static<typeof ExportDestination>;

const Kind = Type.Enum([...EXPORT_KINDS], { description: 'what is exported (docs/exports.md lists the columns)' });
const Format = Type.Enum([...EXPORT_FORMATS], { description: '`csv` (RFC 4180, UTF-8) or `parquet`' });
const Instant = (description: string) => Type.String({ format: 'date-time', description });

export const CreateExportBody = Type.Object(
  {
    kind: Kind,
    format: Format,
    from: Instant('start of the window (inclusive); RFC 3339 with an offset'),
    to: Instant('end of the window (exclusive); after `from`, at most 366 days later'),
    destination: ExportDestination,
  },
  { additionalProperties: false },
);
export type CreateExportBody = Type.Static<typeof CreateExportBody>;

const Nullable = <T extends object>(t: T) => Type.Union([t as never, Type.Null()]);

export const ExportSchema = Type.Object(
  {
    id: Type.String({ examples: ['exp_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    schedule_id: Nullable(Type.String({ description: 'the schedule that added it (exps_…); null: POST /v1/exports' })),
    kind: Kind,
    format: Format,
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    destination: ExportDestination,
    status: Type.Enum([...EXPORT_STATUSES], {
      description: '`pending` → `running` → `completed`; `failed` after 3 failed runs (`error` says why)',
    }),
    attempts: Type.Integer(),
    object_key: Nullable(Type.String({ description: 'the finished object: its S3 key or path below the root' })),
    row_count: Nullable(Type.Integer()),
    byte_count: Nullable(Type.Integer()),
    sha256: Nullable(Type.String({ description: 'SHA-256 of the object’s bytes (hex)' })),
    error: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    completed_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);
export const ExportListSchema = listOf(ExportSchema);

export const ListExportsQuery = Type.Object(
  {
    ...PaginationQuery,
    schedule_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'only this schedule’s' })),
  },
  { additionalProperties: false },
);
export type ListExportsQuery = Type.Static<typeof ListExportsQuery>;

export const CreateExportScheduleBody = Type.Object(
  {
    kind: Kind,
    format: Format,
    interval: Type.Enum([...EXPORT_INTERVALS], { description: 'one export per whole UTC hour or day' }),
    destination: ExportDestination,
    starts_at: Type.Optional(
      Instant('the first window starts at the first whole hour/day at or after this (default: now)'),
    ),
  },
  { additionalProperties: false },
);
export type CreateExportScheduleBody = Type.Static<typeof CreateExportScheduleBody>;

export const ExportScheduleSchema = Type.Object(
  {
    id: Type.String({ examples: ['exps_4fH9sK1xQ7mV4rT8bN3cJ0'] }),
    kind: Kind,
    format: Format,
    interval: Type.Enum([...EXPORT_INTERVALS]),
    destination: ExportDestination,
    starts_at: Type.String({ format: 'date-time' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);
export const ExportScheduleListSchema = listOf(ExportScheduleSchema);
export const ListExportSchedulesQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export type ListExportSchedulesQuery = Type.Static<typeof ListExportSchedulesQuery>;
