import type { ExportFormat } from '../../../shared/vocabulary.js';
import type { ExportColumn } from './columns.js';
import type { ObjectSink } from './destinations.js';
import type { Cell, ExportRecord } from './types.js';

/**
 * The file formats (docs/exports.md): rows go in a page at a time and leave as bytes to the sink at once, so an
 * encoder holds at most one page. The same rows in the same pages give the same bytes (nothing time- or
 * run-dependent is written), which makes a re-run of an export byte-identical.
 */
export interface RowEncoder {
  writePage(rows: ExportRecord[]): Promise<void>;
  finish(): Promise<void>;
}

export async function createEncoder(
  format: ExportFormat,
  columns: ExportColumn[],
  sink: ObjectSink,
): Promise<RowEncoder> {
  return format === 'csv' ? csvEncoder(columns, sink) : parquetEncoder(columns, sink);
}

/** RFC 4180: comma-separated, CRLF, a field quoted when it holds a comma, quote, CR or LF; null is empty. */
function csvField(v: Cell): string {
  if (v === null || v === undefined) return '';
  const s = v instanceof Date ? v.toISOString() : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function csvEncoder(columns: ExportColumn[], sink: ObjectSink): RowEncoder {
  let headerWritten = false;
  const header = () => {
    headerWritten = true;
    return `${columns.map((c) => csvField(c.name)).join(',')}\r\n`;
  };
  return {
    async writePage(rows) {
      let text = headerWritten ? '' : header();
      for (const r of rows) text += `${columns.map((c) => csvField(r[c.name] ?? null)).join(',')}\r\n`;
      await sink.write(Buffer.from(text, 'utf8'));
    },
    async finish() {
      if (!headerWritten) await sink.write(Buffer.from(header(), 'utf8'));
    },
  };
}

const PARQUET_TYPES = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  decimal: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  int: { type: 'INT64' },
  timestamp: { type: 'INT64', converted_type: 'TIMESTAMP_MILLIS' },
} as const;

/**
 * Parquet through hyparquet-writer's incremental ParquetWriter: one row group per page; after each row group the
 * writer's buffer is handed to the sink and emptied (its `flush`), so memory holds one row group, not the file.
 */
async function parquetEncoder(columns: ExportColumn[], sink: ObjectSink): Promise<RowEncoder> {
  // Loaded when a Parquet export runs: its subpath imports trip the test runner's module resolver, so the
  // modules that merely import this one (the billing role, the tests) must not load it.
  const { ByteWriter, ParquetWriter } = await import('hyparquet-writer');
  const out = new ByteWriter(1 << 20) as InstanceType<typeof ByteWriter> & {
    index: number;
    flush?: () => Promise<void>;
  };
  out.flush = async () => {
    const bytes = new Uint8Array(out.buffer, 0, out.index).slice();
    out.index = 0;
    await sink.write(bytes);
  };
  const schema = [
    { name: 'root', num_children: columns.length },
    ...columns.map((c) => ({ name: c.name, repetition_type: 'OPTIONAL' as const, ...PARQUET_TYPES[c.type] })),
  ];
  const writer = new ParquetWriter({ writer: out, schema: schema as never, createdBy: 'meterline' });
  return {
    async writePage(rows) {
      if (rows.length === 0) return;
      const columnData = columns.map((c) => ({
        name: c.name,
        data: rows.map((r) => {
          const v = r[c.name] ?? null;
          return c.type === 'int' && v !== null ? BigInt(v as bigint) : v;
        }),
      }));
      await writer.write({ columnData: columnData as never, rowGroupSize: rows.length });
    },
    async finish() {
      await writer.finish();
      await out.flush!();
    },
  };
}
