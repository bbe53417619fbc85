/**
 * Helpers of the backup test (backup-restore.test.ts): the `meterline` CLI as an operator runs it, the API
 * answers a customer and an operator read (compared between the source and the restored stack), and the usage
 * record ids ClickHouse holds.
 */
import { spawn } from 'node:child_process';
import { repoPath } from '../../shared/paths.js';
import { createClickhouse } from '../../shared/clients/clickhouse.js';
import { readPdf } from '../fixtures/pdf.js';
import { callJson } from '../fixtures/matrix.js';

export interface CliResult {
  code: number;
  json: any;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `meterline <args>` in its own process with `env`; its JSON answer parsed when it printed one. */
export function meterline(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [repoPath('bin/meterline.js'), ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      let json: unknown = null;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : null;
      } catch {
        /* not JSON: the caller looks at stdout/stderr */
      }
      resolve({ code: code ?? 1, json, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** What an account sees through the API, by path; each answer's status and body (PDFs: their pages and text). */
export async function apiAnswers(base: string, token: string, paths: string[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    if (p.endsWith('/download')) {
      const res = await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${token}` } });
      const pdf = Buffer.from(await res.arrayBuffer());
      const facts = res.status === 200 ? readPdf(pdf) : null;
      out[p] = { status: res.status, pages: facts?.pages, text: facts?.text };
      continue;
    }
    const r = await callJson(base, token, 'GET', p);
    out[p] = { status: r.status, body: r.body };
  }
  return out;
}

/**
 * The paths an account's answers are compared on: every list, and every object in them (invoices with their
 * PDFs, credit notes with theirs, webhooks with their deliveries, events, meters with their corrections and
 * the usage of the invoiced month).
 */
export async function pathsOf(base: string, token: string, octoberMeters: string[]): Promise<string[]> {
  const lists = [
    '/v1/meters',
    '/v1/products',
    '/v1/subscriptions',
    '/v1/billing',
    '/v1/billing/invoices?per_page=100',
    '/v1/billing/credit-notes',
    '/v1/billing/credits',
    '/v1/billing/payment-methods',
    '/v1/webhooks',
    '/v1/events?per_page=100',
  ];
  const paths = [...lists];
  const ids = async (list: string) => {
    const r = await callJson(base, token, 'GET', list);
    return r.status === 200 ? ((r.body.data ?? []) as { id: string }[]).map((x) => x.id) : [];
  };
  for (const id of await ids('/v1/meters')) paths.push(`/v1/meters/${id}`, `/v1/meters/${id}/usage/corrections`);
  for (const id of await ids('/v1/products')) paths.push(`/v1/products/${id}`);
  for (const id of await ids('/v1/subscriptions')) paths.push(`/v1/subscriptions/${id}`);
  for (const id of await ids('/v1/billing/invoices?per_page=100'))
    paths.push(`/v1/billing/invoices/${id}`, `/v1/billing/invoices/${id}/download`);
  for (const id of await ids('/v1/billing/credit-notes'))
    paths.push(`/v1/billing/credit-notes/${id}`, `/v1/billing/credit-notes/${id}/download`);
  for (const id of await ids('/v1/billing/payment-methods')) paths.push(`/v1/billing/payment-methods/${id}`);
  for (const id of await ids('/v1/webhooks')) paths.push(`/v1/webhooks/${id}`, `/v1/webhooks/${id}/deliveries`);
  for (const id of await ids('/v1/events?per_page=100')) paths.push(`/v1/events/${id}`);
  for (const id of octoberMeters)
    paths.push(
      `/v1/meters/${id}/usage?start_date=2026-10-01&end_date=2026-10-31&window=none`,
      `/v1/meters/${id}/usage?start_date=2026-10-01&end_date=2026-10-31&window=day`,
    );
  return paths;
}

function plainId(id: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(id)) throw new Error(`not an id: ${id}`);
  return id;
}

/** Record id → value of a meter's rows in ClickHouse, each record once (FINAL), and the rows' count unmerged. */
export async function storedRecords(
  clickhouseUrl: string,
  database: string,
  meterId: string,
): Promise<{ values: Map<string, string>; finalRows: number }> {
  const ch = createClickhouse(clickhouseUrl, database);
  try {
    const rs = await ch.query({
      // ClickHouse 18.16 has no query parameters: the id is checked to be plain instead.
      query: `SELECT record_id, toString(value) AS value FROM ${database}.usage_records FINAL WHERE meter_id = '${plainId(meterId)}'`,
      format: 'JSONEachRow',
    });
    const rows = await rs.json<{ record_id: string; value: string }>();
    return { values: new Map(rows.map((r) => [r.record_id, r.value])), finalRows: rows.length };
  } finally {
    await ch.close();
  }
}
