import type { ClickHouseClient } from '@clickhouse/client';
import type { PgPool } from '../../../shared/clients/postgres.js';
import { canonicalDecimal } from '../../../shared/money/decimal.js';
import type { ExportConfig } from '../../../shared/config-exports.js';
import { readUsagePage, type UsageKey } from '../usage/export-pages-store.js';
import { EXPORT_COLUMNS } from './columns.js';
import { LazyS3, objectKey, objectName, openSink, type ObjectSink } from './destinations.js';
import { createEncoder } from './formats.js';
import { journalLines, type JournalDocument } from './journal.js';
import { dueWindows, alignUp } from './schedules.js';
import { customerIdsOf, readJournalPage, readPgPage, type PgKind } from './sources-store.js';
import {
  claimDueExport,
  completeExport,
  failExport,
  insertScheduledExports,
  renewClaim,
  schedulesWithProgress,
} from './store.js';
import type { Cell, ExportRecord, ExportRow } from './types.js';

/**
 * Running exports (docs/exports.md): the billing role claims each due export, streams its rows page by page
 * into the format's encoder and on to the destination's sink, commits the object whole, then marks the export
 * completed with its export.completed event in one transaction. A crash anywhere before that commit leaves the
 * export claimed; once the claim lapses it runs again from the start and writes the same bytes to the same name.
 */
export interface ExportDeps {
  pg: PgPool;
  clickhouse: ClickHouseClient;
  database: string;
  config: ExportConfig;
  /** Rows per page (Postgres) and per ClickHouse read; also one Parquet row group. */
  pageRows?: number;
  /** Told of each run that failed (the export is retried, or `failed` after its last attempt). */
  failed?: (exportId: string, err: unknown) => void;
}

const DEFAULT_PAGE_ROWS = 50_000;

/** Runs every export due now, one at a time; returns those it completed. */
export async function runDueExports(deps: ExportDeps): Promise<ExportRow[]> {
  const done: ExportRow[] = [];
  const s3 = new LazyS3(deps.config);
  try {
    for (let exp = await claimDueExport(deps.pg); exp; exp = await claimDueExport(deps.pg)) {
      const row = await runClaimed(deps, exp, s3);
      if (row) done.push(row);
    }
  } finally {
    await s3.destroy();
  }
  return done;
}

async function runClaimed(deps: ExportDeps, exp: ExportRow, s3: LazyS3): Promise<ExportRow | null> {
  const key = objectKey(exp.destination, objectName(exp.kind, exp.window_start, exp.window_end, exp.format));
  let sink: ObjectSink | undefined;
  try {
    sink = await openSink(exp.destination, key, deps.config, s3, `${exp.id}.${exp.attempts}`);
    const encoder = await createEncoder(exp.format, EXPORT_COLUMNS[exp.kind], sink);
    let rows = 0;
    let pages = 0;
    for await (const page of recordPages(deps, exp)) {
      await encoder.writePage(page);
      rows += page.length;
      pages += 1;
      if (pages % 10 === 0) await renewClaim(deps.pg, exp.id, exp.attempts);
    }
    await encoder.finish();
    const { bytes, sha256 } = await sink.commit();
    sink = undefined;
    return await completeExport(deps.pg, exp.id, exp.attempts, { objectKey: key, rows, bytes, sha256 }, (r) => ({
      export_id: r.id,
      schedule_id: r.schedule_id,
      kind: r.kind,
      format: r.format,
      from: r.window_start.toISOString(),
      to: r.window_end.toISOString(),
      destination: r.destination.type,
      object_key: key,
      row_count: rows,
      byte_count: bytes,
      sha256,
    }));
  } catch (err) {
    await sink?.abort().catch(() => undefined);
    deps.failed?.(exp.id, err);
    await failExport(deps.pg, exp.id, exp.attempts, (err as Error).message ?? String(err));
    return null;
  }
}

/** The export's rows as the kind's columns, a page at a time. */
async function* recordPages(deps: ExportDeps, exp: ExportRow): AsyncGenerator<ExportRecord[]> {
  const limit = deps.pageRows ?? DEFAULT_PAGE_ROWS;
  const from = exp.window_start;
  const to = exp.window_end;
  if (exp.kind === 'usage') {
    const customers = new Map<string, string | null>();
    let after: UsageKey | null = null;
    do {
      const page = await readUsagePage(deps.clickhouse, deps.database, from.getTime(), to.getTime(), after, limit);
      const unknown = [...new Set(page.rows.map((r) => r.account_id))].filter((a) => !customers.has(a));
      if (unknown.length) {
        const found = await customerIdsOf(deps.pg, unknown);
        for (const a of unknown) customers.set(a, found.get(a) ?? null);
      }
      yield page.rows.map((r) => ({
        customer_id: customers.get(r.account_id) ?? null,
        account_id: r.account_id,
        meter_id: r.meter_id,
        record_id: r.record_id,
        timestamp: new Date(Number(r.ts_text)),
        value: canonicalDecimal(r.value_text),
        received_at: new Date(Number(r.received_text)),
        dimensions: r.dim_keys.length
          ? JSON.stringify(Object.fromEntries(r.dim_keys.map((k, i) => [k, r.dim_values[i] ?? ''])))
          : null,
      }));
      after = page.after;
    } while (after);
    return;
  }
  if (exp.kind === 'journal_entries') {
    for (const type of ['invoice', 'payment', 'credit_note', 'refund'] as JournalDocument['type'][]) {
      let after: unknown[] | null = null;
      do {
        const page = await readJournalPage(deps.pg, type, from, to, after, limit);
        yield page.rows.flatMap(journalLines);
        after = page.after;
      } while (after);
    }
    return;
  }
  const columns = EXPORT_COLUMNS[exp.kind];
  let after: unknown[] | null = null;
  do {
    const page = await readPgPage(deps.pg, exp.kind as PgKind, from, to, after, limit);
    yield page.rows.map((r) => {
      const out: ExportRecord = {};
      for (const c of columns) out[c.name] = cell(r[c.name], c.type);
      return out;
    });
    after = page.after;
  } while (after);
}

function cell(v: unknown, type: string): Cell {
  if (v === null || v === undefined) return null;
  if (type === 'int') return BigInt(v as number);
  if (type === 'timestamp') return v instanceof Date ? v : new Date(String(v));
  if (type === 'decimal') return canonicalDecimal(String(v));
  return String(v);
}

/**
 * Adds every due window of every schedule as an export (once each: unique per schedule and window). `settleMs`:
 * how long after a window's end it is exported, so late records and the period's close can land first.
 */
export async function addScheduledExports(pg: PgPool, now: Date, settleMs: number): Promise<number> {
  let added = 0;
  for (const s of await schedulesWithProgress(pg)) {
    const next = s.next_start ?? alignUp(s.starts_at, s.interval);
    added += await insertScheduledExports(pg, s, dueWindows(next, s.interval, now, settleMs));
  }
  return added;
}
